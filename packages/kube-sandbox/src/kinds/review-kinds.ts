/**
 * The review kinds: TokenReview, SelfSubjectReview and the four access
 * reviews, which are answered from the request, never stored.
 */
import type { FieldError } from '../status.js';
import type { KubeObject, ResourceType } from '../resources.js';
import { define, spec, type Obj } from './kind-def.js';

/** The identity the sandbox's one bearer token authenticates as. */
export const SANDBOX_USER = { username: 'admin', uid: 'admin-uid', groups: ['system:masters', 'system:authenticated'] };

/** A create-only kind answered from the request. */
function review(group: string, kindName: string, namespaced: boolean, answer: (o: KubeObject) => Obj): ResourceType {
  return {
    ...define({ group, version: 'v1', kind: kindName, namespaced }),
    verbs: ['create'],
    review: answer,
  };
}

function accessAllowed(specObj: Obj): boolean {
  return ((specObj.groups as string[] | undefined) ?? []).includes('system:masters');
}

function checkAccessSpec(o: KubeObject, kindName: string, namespace?: string): void {
  const s = spec(o);
  const errors: FieldError[] = [];
  if (!s.resourceAttributes && !s.nonResourceAttributes)
    errors.push({ type: 'FieldValueRequired', field: 'spec.resourceAttributes', detail: 'exactly one of nonResourceAttributes or resourceAttributes must be specified' });
  if (kindName !== 'SelfSubjectAccessReview' && !s.user && !((s.groups as unknown[] | undefined) ?? []).length) {
    errors.push({ type: 'FieldValueRequired', field: 'spec.user', detail: 'at least one of user or group must be specified' });
  }
  if (namespace !== undefined && s.resourceAttributes && s.resourceAttributes.namespace !== namespace) {
    errors.push({ type: 'FieldValueInvalid', field: 'spec.resourceAttributes.namespace', value: s.resourceAttributes.namespace ?? '', detail: 'must match metadata.namespace' });
  }
  // The API server takes no metadata on an access review but a LocalSubjectAccessReview's namespace (managedFields aside).
  const { managedFields: _managed, namespace: ns, ...rest } = o.metadata as Record<string, unknown>;
  const extra = Object.entries(rest).filter(([, v]) => v !== undefined && v !== null && v !== '' && !(typeof v === 'object' && Object.keys(v as object).length === 0));
  if (extra.length || (namespace === undefined && ns)) {
    errors.push({
      type: 'FieldValueInvalid',
      field: 'metadata',
      goValue: goObjectMeta(o.metadata as Record<string, unknown>),
      detail: namespace === undefined ? 'must be empty' : 'must be empty except for namespace',
    });
  }
  if (errors.length) throw new ReviewInvalid(errors);
}

/** The fields of an ObjectMeta that are set, as Go's %#v prints the struct (abridged). */
function goObjectMeta(meta: Record<string, unknown>): string {
  const str = (v: unknown) => JSON.stringify(typeof v === 'string' ? v : '');
  const map = (v: unknown) =>
    v && typeof v === 'object' && Object.keys(v).length
      ? `map[string]string{${Object.entries(v as Record<string, unknown>)
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([k, x]) => `${JSON.stringify(k)}:${JSON.stringify(String(x))}`)
          .join(', ')}}`
      : 'map[string]string(nil)';
  return `v1.ObjectMeta{Name:${str(meta.name)}, GenerateName:${str(meta.generateName)}, Namespace:${str(meta.namespace)}, Labels:${map(meta.labels)}, Annotations:${map(meta.annotations)}}`;
}

/** Thrown by a review's answer: a 422 with these field errors (rest.ts renders it). */
export class ReviewInvalid extends Error {
  constructor(readonly errors: FieldError[]) {
    super('invalid review');
  }
}

/** TokenReview and the access reviews; `token` is the one bearer token the sandbox accepts. */
export function reviewKinds(token: string): ResourceType[] {
  return [
    review('authentication.k8s.io', 'TokenReview', false, (o) => {
      const given = spec(o).token;
      if (given === token) {
        return {
          authenticated: true,
          user: { username: SANDBOX_USER.username, uid: SANDBOX_USER.uid, groups: [...SANDBOX_USER.groups] },
          audiences: ['https://kubernetes.default.svc.cluster.local'],
        };
      }
      return { user: {}, error: 'invalid bearer token' };
    }),
    // `kubectl auth whoami` (authentication.k8s.io/v1 since 1.28).
    review('authentication.k8s.io', 'SelfSubjectReview', false, () => ({
      userInfo: { username: SANDBOX_USER.username, uid: SANDBOX_USER.uid, groups: [...SANDBOX_USER.groups] },
    })),
    review('authorization.k8s.io', 'SelfSubjectAccessReview', false, (o) => {
      checkAccessSpec(o, 'SelfSubjectAccessReview');
      return { allowed: true };
    }),
    review('authorization.k8s.io', 'SubjectAccessReview', false, (o) => {
      checkAccessSpec(o, 'SubjectAccessReview');
      return { allowed: accessAllowed(spec(o)) };
    }),
    review('authorization.k8s.io', 'LocalSubjectAccessReview', true, (o) => {
      checkAccessSpec(o, 'LocalSubjectAccessReview', o.metadata.namespace);
      return { allowed: accessAllowed(spec(o)) };
    }),
    review('authorization.k8s.io', 'SelfSubjectRulesReview', false, () => ({
      resourceRules: [
        { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'] },
        { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
      ],
      nonResourceRules: [
        { verbs: ['get'], nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'] },
        { verbs: ['*'], nonResourceURLs: ['*'] },
        { verbs: ['get'], nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'] },
      ],
      incomplete: false,
    })),
  ];
}
