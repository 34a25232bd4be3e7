/**
 * The sample packages in csar-samples/ are data the docs walk through and
 * later tests run, so they must stay consistent on their own: YAML that
 * parses, TOSCA.meta hashes that match, and request bodies that name only
 * flavours, levels, aspects and files their package has. The full package
 * validator checks far more; this guards the samples until then.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';

const samplesRoot = resolve(import.meta.dirname, '../../csar-samples');

/** Every regular file under `dir`, as '/'-separated paths relative to it. */
function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) out.push(relative(dir, full).split(sep).join('/'));
    }
  };
  walk(dir);
  return out.sort();
}

/** Members inside a Helm chart directory (one with Chart.yaml under Files/): Go templates, not Kubernetes YAML. */
function chartMembers(files: string[]): Set<string> {
  const roots = files.filter((f) => /^Files\/(.+\/)?Chart\.yaml$/.test(f)).map((f) => f.slice(0, -'Chart.yaml'.length));
  return new Set(files.filter((f) => roots.some((r) => f.startsWith(r))));
}

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

interface MetaBlock {
  Name: string;
  'Content-Type'?: string;
  Algorithm?: string;
  Hash?: string;
}

/** TOSCA.meta: the block of keys before the first blank line, then one block per `Name:`. */
function readToscaMeta(file: string): { head: Record<string, string>; blocks: MetaBlock[] } {
  const paragraphs = readFileSync(file, 'utf8')
    .split(/\r?\n\s*\r?\n/)
    .map((p) =>
      Object.fromEntries(
        p
          .split(/\r?\n/)
          .filter((line) => line.trim() !== '')
          .map((line) => {
            const i = line.indexOf(':');
            return [line.slice(0, i).trim(), line.slice(i + 1).trim()];
          }),
      ),
    )
    .filter((p) => Object.keys(p).length > 0);
  const [head = {}, ...rest] = paragraphs;
  return { head, blocks: rest as unknown as MetaBlock[] };
}

type Yaml = Record<string, unknown>;

/** What the tests need to know of a package's VNFD, read from every Definitions file. */
interface VnfdFacts {
  descriptorIds: string[];
  flavourIds: string[];
  vduNames: Map<string, string>;
  aspects: Map<string, number>;
  levels: string[];
  defaultLevel?: string;
  vduProfiles: Map<string, { min: number; max: number }>;
  vduLevelCounts: Map<string, Record<string, number>>;
  aspectDeltas: Map<string, { aspect: string; perStep: number }>;
  initialDeltas: Map<string, number>;
}

function readVnfdFacts(pkgDir: string): VnfdFacts {
  const facts: VnfdFacts = {
    descriptorIds: [],
    flavourIds: [],
    vduNames: new Map(),
    aspects: new Map(),
    levels: [],
    vduProfiles: new Map(),
    vduLevelCounts: new Map(),
    aspectDeltas: new Map(),
    initialDeltas: new Map(),
  };
  const defs = join(pkgDir, 'Definitions');
  for (const name of readdirSync(defs).filter((n) => n.endsWith('.yaml'))) {
    const doc = yaml.load(readFileSync(join(defs, name), 'utf8')) as Yaml;
    const topo = (doc.topology_template ?? {}) as Yaml;
    const subst = topo.substitution_mappings as Yaml | undefined;
    const flavour = (subst?.properties as Yaml | undefined)?.flavour_id;
    if (typeof flavour === 'string') facts.flavourIds.push(flavour);
    for (const [id, node] of Object.entries((topo.node_templates ?? {}) as Record<string, Yaml>)) {
      const props = (node.properties ?? {}) as Yaml;
      if (typeof props.descriptor_id === 'string') facts.descriptorIds.push(props.descriptor_id);
      if (node.type === 'tosca.nodes.nfv.Vdu.Compute') {
        facts.vduNames.set(id, props.name as string);
        const profile = props.vdu_profile as Yaml;
        facts.vduProfiles.set(id, {
          min: profile.min_number_of_instances as number,
          max: profile.max_number_of_instances as number,
        });
      }
    }
    for (const entry of (topo.policies ?? []) as Record<string, Yaml>[]) {
      for (const policy of Object.values(entry)) {
        const props = (policy.properties ?? {}) as Yaml;
        const targets = (policy.targets ?? []) as string[];
        switch (policy.type) {
          case 'tosca.policies.nfv.ScalingAspects':
            for (const [aspectId, aspect] of Object.entries(props.aspects as Record<string, Yaml>)) {
              facts.aspects.set(aspectId, aspect.max_scale_level as number);
            }
            break;
          case 'tosca.policies.nfv.InstantiationLevels':
            facts.levels.push(...Object.keys(props.levels as Yaml));
            facts.defaultLevel = props.default_level as string;
            break;
          case 'tosca.policies.nfv.VduInstantiationLevels':
            for (const vdu of targets) {
              facts.vduLevelCounts.set(vdu, Object.fromEntries(Object.entries(props.levels as Record<string, Yaml>).map(([l, v]) => [l, v.number_of_instances as number])));
            }
            break;
          case 'tosca.policies.nfv.VduScalingAspectDeltas': {
            const deltas = Object.values(props.deltas as Record<string, Yaml>);
            for (const vdu of targets) {
              facts.aspectDeltas.set(vdu, { aspect: props.aspect as string, perStep: deltas[0]!.number_of_instances as number });
            }
            break;
          }
          case 'tosca.policies.nfv.VduInitialDelta':
            for (const vdu of targets) {
              facts.initialDeltas.set(vdu, (props.initial_delta as Yaml).number_of_instances as number);
            }
            break;
        }
      }
    }
  }
  return facts;
}

const samples = readdirSync(samplesRoot, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

function packagesOf(sample: string): string[] {
  return readdirSync(join(samplesRoot, sample), { withFileTypes: true })
    .filter((e) => e.isDirectory() && /^package(-.+)?$/.test(e.name))
    .map((e) => join(samplesRoot, sample, e.name));
}

/** `group/version/Kind` of every custom resource version with a scale subresource, from the samples' CRDs. */
function scalableKinds(): Set<string> {
  const out = new Set<string>();
  for (const [, pkg] of allPackages) {
    const files = listFiles(pkg);
    for (const f of files.filter((x) => x.startsWith('Files/') && x.endsWith('.yaml') && !chartMembers(files).has(x))) {
      for (const doc of yaml.loadAll(readFileSync(join(pkg, f), 'utf8')) as Yaml[]) {
        if (doc?.kind !== 'CustomResourceDefinition') continue;
        const spec = doc.spec as { group: string; names: { kind: string }; versions: Array<{ name: string; subresources?: { scale?: unknown } }> };
        for (const v of spec.versions) if (v.subresources?.scale) out.add(`${spec.group}/${v.name}/${spec.names.kind}`);
      }
    }
  }
  return out;
}

const allPackages = samples.flatMap((s) => packagesOf(s).map((p) => [relative(samplesRoot, p), p] as const));

describe('csar-samples', () => {
  it('holds the basic CNF, the Helm CNF, the Kuryr CNF, the Heat VNF and the Cluster API CNFs, each with a package, requests and a README', () => {
    expect(samples).toEqual(
      expect.arrayContaining(['basic-cnf', 'helm-cnf', 'heat-vnf', 'kuryr-cnf', 'capi-mgmt', 'capi-capo-workload', 'capi-kamaji-kubevirt-workload', 'private-registry-vnf']),
    );
    for (const s of samples) {
      expect(existsSync(join(samplesRoot, s, 'package', 'TOSCA-Metadata', 'TOSCA.meta')), s).toBe(true);
      expect(existsSync(join(samplesRoot, s, 'requests', 'instantiate.json')), s).toBe(true);
      expect(existsSync(join(samplesRoot, s, 'README.md')), s).toBe(true);
    }
  });

  describe.each(allPackages)('%s', (_name, pkg) => {
    const files = listFiles(pkg);

    it('is small text: no binaries (but small docker save tars under Files/images/), no bundled ETSI type files', () => {
      for (const f of files) {
        const bytes = readFileSync(join(pkg, f));
        expect(bytes.length, f).toBeLessThan(64 * 1024);
        if (!/^Files\/images\/[^/]+\.tar$/.test(f)) expect(bytes.includes(0), `${f} has a NUL byte`).toBe(false);
        expect(f, 'vnfm supplies the ETSI SOL001 type files').not.toMatch(/etsi_nfv_sol001_/);
      }
    });

    it('has YAML files that all parse', () => {
      const yamlFiles = files.filter((f) => ((f.endsWith('.yaml') || f.endsWith('.yml')) && !chartMembers(files).has(f)) || /Chart\.yaml$|values\.yaml$/.test(f));
      expect(yamlFiles.length).toBeGreaterThan(0);
      for (const f of yamlFiles) {
        const docs = yaml.loadAll(readFileSync(join(pkg, f), 'utf8'));
        expect(docs.length, f).toBeGreaterThan(0);
        for (const d of docs) expect(d, f).toBeTypeOf('object');
      }
    });

    it('has a TOSCA.meta whose entry exists and whose every Name has the right SHA-256', () => {
      const { head, blocks } = readToscaMeta(join(pkg, 'TOSCA-Metadata', 'TOSCA.meta'));
      expect(head['TOSCA-Meta-File-Version']).toBe('1.0');
      expect(head['CSAR-Version']).toBe('1.1');
      expect(head['Created-By'] ?? head['Created-by']).toMatch(/\S/);
      expect(files).toContain(head['Entry-Definitions']);
      for (const block of blocks) {
        expect(files, `TOSCA.meta names ${block.Name}`).toContain(block.Name);
        expect(block.Algorithm).toBe('SHA-256');
        expect(block.Hash, block.Name).toBe(sha256(join(pkg, block.Name)));
      }
      // Every Kubernetes manifest is declared, so its hash is checked.
      const declared = blocks.map((b) => b.Name);
      for (const f of files.filter((x) => x.startsWith('Files/'))) expect(declared, f).toContain(f);
    });

    it('has a VNFD whose levels, aspects and VDU profiles agree', () => {
      const v = readVnfdFacts(pkg);
      expect(v.descriptorIds).toHaveLength(1);
      expect(v.flavourIds.length).toBeGreaterThan(0);
      expect(v.levels).toContain(v.defaultLevel);
      for (const [vdu, { aspect, perStep }] of v.aspectDeltas) {
        expect(v.aspects.has(aspect), `${vdu} scales by unknown aspect ${aspect}`).toBe(true);
        const profile = v.vduProfiles.get(vdu)!;
        const initial = v.initialDeltas.get(vdu) ?? 0;
        expect(initial, `${vdu} initial delta`).toBe(profile.min);
        expect(initial + perStep * v.aspects.get(aspect)!, `${vdu} at max_scale_level`).toBe(profile.max);
      }
      for (const [vdu, counts] of v.vduLevelCounts) {
        expect(v.vduNames.has(vdu), `level counts for unknown VDU ${vdu}`).toBe(true);
        const profile = v.vduProfiles.get(vdu)!;
        for (const level of v.levels) {
          const n = counts[level];
          expect(n, `${vdu} at ${level}`).toBeGreaterThanOrEqual(profile.min);
          expect(n, `${vdu} at ${level}`).toBeLessThanOrEqual(profile.max);
        }
      }
    });

    it('names each CNF VDU after a workload, or a custom resource whose CRD (in any sample) has /scale', () => {
      const charts = chartMembers(files);
      const manifests = files.filter((f) => f.startsWith('Files/') && f.endsWith('.yaml') && !charts.has(f));
      if (charts.size > 0) {
        // A Helm chart names each VDU's workload <VDU name>-<release> (as Tacker's Helm charts do).
        const names = [...charts]
          .filter((f) => f.includes('/templates/'))
          .flatMap((f) =>
            [
              ...readFileSync(join(pkg, f), 'utf8').matchAll(
                /^kind: (Deployment|StatefulSet|DaemonSet|ReplicaSet)\nmetadata:\n(?:\s+#.*\n)*\s+name: (\S+)-\{\{ \.Release\.Name \}\}$/gm,
              ),
            ].map((m) => m[2]),
          );
        for (const [vdu, name] of readVnfdFacts(pkg).vduNames) expect(names, `${vdu} (name ${name}) has no workload in the chart`).toContain(name);
        return;
      }
      // A VM-based VNF's VDUs are servers (BaseHOT), not workloads.
      if (manifests.length === 0 || files.some((f) => f.startsWith('BaseHOT/'))) return;
      const objects = manifests.flatMap((f) => yaml.loadAll(readFileSync(join(pkg, f), 'utf8')) as Yaml[]);
      const removed = /^(extensions\/v1beta1|apps\/v1beta[12]|rbac\.authorization\.k8s\.io\/v1beta1)$/;
      for (const o of objects) {
        expect(o.apiVersion, JSON.stringify(o.metadata)).toBeTypeOf('string');
        expect(o.kind).toBeTypeOf('string');
        expect(o.apiVersion as string, `${o.kind} uses a removed apiVersion`).not.toMatch(removed);
      }
      const scalable = scalableKinds();
      const workloads = new Set(
        objects
          .filter(
            (o) => ['Deployment', 'DaemonSet', 'StatefulSet', 'ReplicaSet', 'Pod'].includes(o.kind as string) || scalable.has(`${o.apiVersion as string}/${o.kind as string}`),
          )
          .map((o) => (o.metadata as Yaml).name as string),
      );
      for (const [vdu, name] of readVnfdFacts(pkg).vduNames) {
        expect(workloads.has(name), `${vdu} (name ${name}) has no workload`).toBe(true);
      }
    });
  });

  describe.each(samples)('%s requests', (sample) => {
    const dir = join(samplesRoot, sample, 'requests');
    const pkgs = packagesOf(sample).map((p) => ({ dir: p, vnfd: readVnfdFacts(p), files: listFiles(p) }));
    const base = pkgs.find((p) => p.dir.endsWith(`${sep}package`))!;
    const requests = readdirSync(dir).filter((f) => f.endsWith('.json'));

    it('has instantiate, scale (when the VNFD has aspects), heal and terminate bodies', () => {
      const scale = base.vnfd.aspects.size > 0 ? ['scale-out.json', 'scale-in.json'] : [];
      expect(requests).toEqual(expect.arrayContaining(['instantiate.json', ...scale, 'heal.json', 'terminate.json']));
    });

    it.each(requests)('%s parses and names only what the VNFD has', (file) => {
      const body = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Yaml;
      const additional = (body.additionalParams ?? {}) as Yaml;
      let target = base;
      if (file === 'change-package.json') {
        const match = pkgs.find((p) => p.vnfd.descriptorIds.includes(body.vnfdId as string));
        expect(match, `no package of ${sample} has descriptor_id ${String(body.vnfdId)}`).toBeDefined();
        expect(match).not.toBe(base);
        target = match!;
        expect(additional.upgrade_type).toBe('RollingUpdate');
        for (const p of (additional.vdu_params ?? []) as Yaml[]) {
          expect(target.vnfd.vduNames.has(p.vdu_id as string), String(p.vdu_id)).toBe(true);
        }
      }
      if (body.flavourId !== undefined) expect(target.vnfd.flavourIds).toContain(body.flavourId);
      if (body.instantiationLevelId !== undefined) expect(target.vnfd.levels).toContain(body.instantiationLevelId);
      if (body.aspectId !== undefined) {
        expect([...target.vnfd.aspects.keys()]).toContain(body.aspectId);
        expect(body.type).toMatch(/^SCALE_(OUT|IN)$/);
        expect(body.numberOfSteps as number).toBeLessThanOrEqual(target.vnfd.aspects.get(body.aspectId as string)!);
      }
      if (body.terminationType !== undefined) expect(body.terminationType).toMatch(/^(GRACEFUL|FORCEFUL)$/);
      for (const f of (additional['lcm-kubernetes-def-files'] ?? []) as string[]) {
        expect(target.files, `${file} lists ${f}`).toContain(f);
      }
      // Helm requests (Tacker v2 and v1 forms) name a chart directory of the package, its VDUs and aspects.
      const install = ((additional.using_helm_install_param ?? []) as Yaml[])[0];
      for (const chart of [additional.helm_chart_path, install?.helmchartfile_path].filter((c): c is string => typeof c === 'string')) {
        expect(target.files, `${file} names chart ${chart}`).toContain(`${chart}/Chart.yaml`);
      }
      for (const vdu of Object.keys((additional.helm_value_names ?? {}) as Yaml)) expect(target.vnfd.vduNames.has(vdu), vdu).toBe(true);
      for (const aspect of Object.keys((additional.helm_replica_values ?? {}) as Yaml)) expect(target.vnfd.aspects.has(aspect), aspect).toBe(true);
    });

    it('lists every Kubernetes manifest of the package in instantiate.json', () => {
      // A VM-based VNF (BaseHOT) deploys no manifests; one it carries is for its management driver.
      const vmBased = base.files.some((f) => f.startsWith('BaseHOT/'));
      const charts = chartMembers(base.files);
      const manifests = vmBased ? [] : base.files.filter((f) => f.startsWith('Files/') && f.endsWith('.yaml') && !charts.has(f));
      const body = JSON.parse(readFileSync(join(dir, 'instantiate.json'), 'utf8')) as Yaml;
      const listed = ((body.additionalParams as Yaml | undefined)?.['lcm-kubernetes-def-files'] ?? []) as string[];
      expect([...listed].sort()).toEqual(manifests);
    });
  });

  it('keeps request bodies beside the package, not inside it', () => {
    for (const s of samples) {
      for (const p of packagesOf(s)) {
        expect(
          listFiles(p).filter((f) => f.endsWith('.json')),
          p,
        ).toEqual([]);
        expect(statSync(p).isDirectory()).toBe(true);
      }
    }
  });
});
