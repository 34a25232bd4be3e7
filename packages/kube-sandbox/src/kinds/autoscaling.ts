/**
 * HorizontalPodAutoscaler in both versions the API server serves:
 * autoscaling/v2 (preferred, and the version objects are stored in) and
 * autoscaling/v1. One object, seen through either version, converted as
 * the API server converts it (pkg/apis/autoscaling/v1/conversion.go): v1's
 * `targetCPUUtilizationPercentage` is v2's CPU Utilization metric; what v1
 * cannot say (other metrics, `behavior`, status conditions) travels in
 * `autoscaling.alpha.kubernetes.io/*` annotations, so a v1 read-modify-write
 * keeps it. Defaults are v2's: minReplicas 1, a CPU Utilization metric of
 * 80% when none is given, every unset field of a given `behavior` rule.
 */
import type { KubeObject, ResourceConversion, ResourceStrategy, ResourceType } from '../resources.js';

type Obj = Record<string, any>;

export const METRICS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/metrics';
export const CURRENT_METRICS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/current-metrics';
export const CONDITIONS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/conditions';
export const BEHAVIOR_ANNOTATION = 'autoscaling.alpha.kubernetes.io/behavior';
const DEFAULT_CPU_UTILIZATION = 80;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function scaleUpDefaults(): Obj {
  return {
    stabilizationWindowSeconds: 0,
    selectPolicy: 'Max',
    policies: [
      { type: 'Pods', value: 4, periodSeconds: 15 },
      { type: 'Percent', value: 100, periodSeconds: 15 },
    ],
  };
}

function scaleDownDefaults(): Obj {
  return { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] };
}

function rules(given: unknown, defaults: Obj): Obj {
  if (!isObj(given)) return defaults;
  const out = { ...defaults };
  for (const k of ['selectPolicy', 'stabilizationWindowSeconds', 'policies', 'tolerance']) if (given[k] !== undefined && given[k] !== null) out[k] = given[k];
  return out;
}

/** autoscaling/v2 defaulting (SetDefaults_HorizontalPodAutoscaler). */
export function defaultHpaV2(o: KubeObject): void {
  const spec = (o.spec ??= {}) as Obj;
  spec.minReplicas ??= 1;
  if (!Array.isArray(spec.metrics) || spec.metrics.length === 0) {
    spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } }];
  }
  if (isObj(spec.behavior)) {
    spec.behavior.scaleUp = rules(spec.behavior.scaleUp, scaleUpDefaults());
    spec.behavior.scaleDown = rules(spec.behavior.scaleDown, scaleDownDefaults());
  }
}

export const hpaStrategy: ResourceStrategy = { applyDefaults: defaultHpaV2 };

const isCpuUtilization = (m: Obj): boolean =>
  m.type === 'Resource' && m.resource?.name === 'cpu' && m.resource?.target?.type === 'Utilization' && m.resource.target.averageUtilization !== undefined;

/** A v2 MetricTarget as v1's flat target fields. */
function v1Target(t: Obj | undefined, utilization: string, average: string, value?: string): Obj {
  const out: Obj = {};
  if (t?.averageUtilization !== undefined) out[utilization] = t.averageUtilization;
  if (t?.averageValue !== undefined) out[average] = t.averageValue;
  if (value && t?.value !== undefined) out[value] = t.value;
  return out;
}

/** A v1 MetricSpec's flat target fields as a v2 MetricTarget. */
function v2Target(s: Obj, utilization: string | undefined, average: string, value?: string): Obj {
  if (utilization && s[utilization] !== undefined) return { type: 'Utilization', averageUtilization: s[utilization] };
  if (s[average] !== undefined) return { type: 'AverageValue', averageValue: s[average] };
  if (value && s[value] !== undefined) return { type: 'Value', value: s[value] };
  return {};
}

const dropUndefined = (o: Obj): Obj => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

function metricToV1(m: Obj): Obj {
  switch (m.type) {
    case 'Resource':
      return { type: 'Resource', resource: { name: m.resource?.name, ...v1Target(m.resource?.target, 'targetAverageUtilization', 'targetAverageValue') } };
    case 'ContainerResource':
      return {
        type: 'ContainerResource',
        containerResource: {
          name: m.containerResource?.name,
          container: m.containerResource?.container,
          ...v1Target(m.containerResource?.target, 'targetAverageUtilization', 'targetAverageValue'),
        },
      };
    case 'Pods':
      return { type: 'Pods', pods: dropUndefined({ metricName: m.pods?.metric?.name, selector: m.pods?.metric?.selector, ...v1Target(m.pods?.target, '', 'targetAverageValue') }) };
    case 'Object':
      return {
        type: 'Object',
        object: dropUndefined({
          target: m.object?.describedObject,
          metricName: m.object?.metric?.name,
          selector: m.object?.metric?.selector,
          ...v1Target(m.object?.target, '', 'averageValue', 'targetValue'),
        }),
      };
    case 'External':
      return {
        type: 'External',
        external: dropUndefined({
          metricName: m.external?.metric?.name,
          metricSelector: m.external?.metric?.selector,
          ...v1Target(m.external?.target, '', 'targetAverageValue', 'targetValue'),
        }),
      };
    default:
      return m;
  }
}

function metricToV2(m: Obj): Obj {
  switch (m.type) {
    case 'Resource':
      return { type: 'Resource', resource: { name: m.resource?.name, target: v2Target(m.resource ?? {}, 'targetAverageUtilization', 'targetAverageValue') } };
    case 'ContainerResource':
      return {
        type: 'ContainerResource',
        containerResource: {
          name: m.containerResource?.name,
          container: m.containerResource?.container,
          target: v2Target(m.containerResource ?? {}, 'targetAverageUtilization', 'targetAverageValue'),
        },
      };
    case 'Pods':
      return {
        type: 'Pods',
        pods: { metric: dropUndefined({ name: m.pods?.metricName, selector: m.pods?.selector }), target: v2Target(m.pods ?? {}, undefined, 'targetAverageValue') },
      };
    case 'Object':
      return {
        type: 'Object',
        object: {
          describedObject: m.object?.target,
          metric: dropUndefined({ name: m.object?.metricName, selector: m.object?.selector }),
          target: v2Target(m.object ?? {}, undefined, 'averageValue', 'targetValue'),
        },
      };
    case 'External':
      return {
        type: 'External',
        external: {
          metric: dropUndefined({ name: m.external?.metricName, selector: m.external?.metricSelector }),
          target: v2Target(m.external ?? {}, undefined, 'targetAverageValue', 'targetValue'),
        },
      };
    default:
      return m;
  }
}

function parsed(annotations: Obj, key: string): unknown {
  const text = annotations[key];
  delete annotations[key];
  if (typeof text !== 'string') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The stored (v2) object as autoscaling/v1 serves it. */
export function hpaToV1(stored: KubeObject): KubeObject {
  const spec = (stored.spec ?? {}) as Obj;
  const st = (stored.status ?? {}) as Obj;
  const annotations: Obj = { ...(stored.metadata.annotations ?? {}) };
  const metrics = (Array.isArray(spec.metrics) ? spec.metrics : []) as Obj[];
  const cpu = metrics.find((m) => m.type === 'Resource' && m.resource?.name === 'cpu');
  const other = metrics.filter((m) => !isCpuUtilization(m));
  if (other.length) annotations[METRICS_ANNOTATION] = JSON.stringify(other.map(metricToV1));
  if (isObj(spec.behavior)) annotations[BEHAVIOR_ANNOTATION] = JSON.stringify(spec.behavior);
  if (Array.isArray(st.currentMetrics) && st.currentMetrics.length) annotations[CURRENT_METRICS_ANNOTATION] = JSON.stringify(st.currentMetrics);
  if (Array.isArray(st.conditions) && st.conditions.length) annotations[CONDITIONS_ANNOTATION] = JSON.stringify(st.conditions);
  const v1Spec: Obj = dropUndefined({ scaleTargetRef: spec.scaleTargetRef, minReplicas: spec.minReplicas, maxReplicas: spec.maxReplicas });
  if (cpu && cpu.resource?.target?.averageUtilization !== undefined) v1Spec.targetCPUUtilizationPercentage = cpu.resource.target.averageUtilization;
  const currentCpu = (Array.isArray(st.currentMetrics) ? (st.currentMetrics as Obj[]) : []).find((m) => m.type === 'Resource' && m.resource?.name === 'cpu')?.resource?.current
    ?.averageUtilization;
  const v1Status = dropUndefined({
    observedGeneration: st.observedGeneration,
    lastScaleTime: st.lastScaleTime,
    currentReplicas: st.currentReplicas ?? (stored.status ? 0 : undefined),
    desiredReplicas: st.desiredReplicas ?? (stored.status ? 0 : undefined),
    currentCPUUtilizationPercentage: currentCpu,
  });
  const metadata = { ...stored.metadata };
  if (Object.keys(annotations).length) metadata.annotations = annotations;
  else delete metadata.annotations;
  const out: KubeObject = { ...stored, metadata, spec: v1Spec };
  if (stored.status !== undefined) out.status = v1Status;
  return out;
}

/** An autoscaling/v1 object in its stored (v2) form. */
export function hpaToV2(served: KubeObject): KubeObject {
  const spec = (served.spec ?? {}) as Obj;
  const st = (served.status ?? {}) as Obj;
  const annotations: Obj = { ...(served.metadata.annotations ?? {}) };
  const metrics: Obj[] = [];
  if (spec.targetCPUUtilizationPercentage !== undefined && spec.targetCPUUtilizationPercentage !== null) {
    metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage } } });
  }
  const other = parsed(annotations, METRICS_ANNOTATION);
  if (Array.isArray(other)) metrics.push(...other.filter(isObj).map(metricToV2));
  const behavior = parsed(annotations, BEHAVIOR_ANNOTATION);
  const currentMetrics = parsed(annotations, CURRENT_METRICS_ANNOTATION);
  const conditions = parsed(annotations, CONDITIONS_ANNOTATION);
  const v2Spec: Obj = dropUndefined({ scaleTargetRef: spec.scaleTargetRef, minReplicas: spec.minReplicas, maxReplicas: spec.maxReplicas });
  if (metrics.length) v2Spec.metrics = metrics;
  if (isObj(behavior)) v2Spec.behavior = behavior;
  const v2Status: Obj = dropUndefined({
    observedGeneration: st.observedGeneration,
    lastScaleTime: st.lastScaleTime,
    currentReplicas: st.currentReplicas,
    desiredReplicas: st.desiredReplicas,
  });
  if (Array.isArray(currentMetrics)) v2Status.currentMetrics = currentMetrics;
  else if (st.currentCPUUtilizationPercentage !== undefined)
    v2Status.currentMetrics = [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: st.currentCPUUtilizationPercentage } } }];
  if (Array.isArray(conditions)) v2Status.conditions = conditions;
  const metadata = { ...served.metadata };
  if (Object.keys(annotations).length) metadata.annotations = annotations;
  else delete metadata.annotations;
  const out: KubeObject = { ...served, metadata, spec: v2Spec };
  if (served.status !== undefined) out.status = v2Status;
  return out;
}

export const hpaV1Conversion: ResourceConversion = { served: hpaToV1, stored: hpaToV2 };

/** autoscaling/v1 HorizontalPodAutoscaler: the v2 kind's resource, seen through the v1 conversion. */
export function hpaV1(v2: ResourceType): ResourceType {
  const type: ResourceType = { ...v2, version: 'v1', conversion: hpaV1Conversion };
  if (v2.columns) type.columns = v2.columns.map((c) => ({ ...c }));
  return type;
}
