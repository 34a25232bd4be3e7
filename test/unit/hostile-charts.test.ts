/**
 * Hostile Helm charts, through the real command layer (in-process main(),
 * argv in, exit code and output out) and the validation underneath it.
 *
 * Chart archives built byte by byte (test/support/tar-writer.ts) and by GNU
 * tar: members named with '..' (in the header, a pax record, a GNU long
 * name, with backslashes), absolute paths, symbolic and hard links, devices
 * and FIFOs, and archives past the member, size and ratio limits. Each is
 * refused by vnfpkg-validate and vnfpkg-onboard with exit 2, a finding
 * naming the chart file and the member, and nothing onboarded.
 *
 * Charts that reach beyond their instance, rendered by the real helm
 * (test/support/helm.ts): cluster-scoped objects (a ClusterRoleBinding to
 * cluster-admin, a ClusterRole, CRDs from crds/ and a custom resource they
 * make cluster-scoped, a Namespace, a PersistentVolume, a StorageClass,
 * webhook configurations) and objects in another namespace are a warning
 * each, naming kind, name and namespace; --strict refuses them (exit 2).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { readTarGz } from '../../src/csar/helm-chart.js';
import { createChartRenderer } from '../../src/csar/helm-render.js';
import { validatePackage } from '../../src/csar/validate.js';
import { createHelmChartTool } from '../../src/infra/helm/index.js';
import { helmPath } from '../support/helm.js';
import { buildTar, buildTarGz, type TarMember } from '../support/tar-writer.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/helm-cnf/package');
const CHART_DIR = 'Files/kubernetes/helm-cnf';
const ARCHIVE = 'Files/kubernetes/helm-cnf-0.1.0.tgz';
const tmp = mkdtempSync(join(tmpdir(), 'vnfm-hostile-charts-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let n = 0;
/** A copy of the sample package (its TOSCA.meta without the chart's hashes), changed by `edit`. */
function variant(edit: (dir: string) => void): string {
  const dir = join(tmp, `pkg-${++n}`);
  cpSync(SAMPLE, dir, { recursive: true });
  writeFileSync(join(dir, 'TOSCA-Metadata/TOSCA.meta'), readFileSync(join(SAMPLE, 'TOSCA-Metadata/TOSCA.meta'), 'utf8').split('\n\nName:')[0] + '\n');
  edit(dir);
  return dir;
}

/** The sample chart's files as archive members under helm-cnf/, as helm package writes them. */
function chartMembers(): TarMember[] {
  const root = join(SAMPLE, CHART_DIR);
  const out: TarMember[] = [{ name: 'helm-cnf/', type: '5' }];
  const walk = (d: string) => {
    for (const e of readdirSync(d).sort()) {
      const p = join(d, e);
      const name = `helm-cnf/${relative(root, p)}`;
      if (statSync(p).isDirectory()) {
        out.push({ name: `${name}/`, type: '5' });
        walk(p);
      } else out.push({ name, data: readFileSync(p) });
    }
  };
  walk(root);
  return out;
}

/** The sample with its chart directory replaced by the archive `gz`. */
function packageWith(gz: Buffer, archive = ARCHIVE): string {
  return variant((dir) => {
    rmSync(join(dir, CHART_DIR), { recursive: true });
    writeFileSync(join(dir, archive), gz);
  });
}

async function run(argv: string[], env: Record<string, string> = {}) {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (d: Buffer) => (stdout += d.toString()));
  err.on('data', (d: Buffer) => (stderr += d.toString()));
  const home = join(mkdtempSync(join(tmp, 'h-')), 'home');
  const code = await main(argv, { env: { VNFM_HOME: home, HOME: tmp, ...env }, cwd: tmp, streams: { stdin: new PassThrough(), stdout: out, stderr: err } });
  return { code, stdout, stderr, home };
}

const MiB = 1024 * 1024;

interface ArchiveCase {
  name: string;
  archive: () => Buffer;
  code: string;
  /** What the finding says: the member, and why. */
  says: RegExp;
}

/** The sample chart plus `extra` members, gzipped. */
const chartPlus = (...extra: TarMember[]) => buildTarGz([...chartMembers(), ...extra]);

/** The sample chart packed by GNU tar from a directory `prepare` changed, with `args` before the directory. */
function gnuTar(prepare: (chart: string) => void, args: string[] = [], top = 'helm-cnf'): Buffer {
  const dir = mkdtempSync(join(tmp, 'tar-'));
  cpSync(join(SAMPLE, CHART_DIR), join(dir, 'helm-cnf'), { recursive: true });
  prepare(join(dir, 'helm-cnf'));
  const out = join(dir, 'chart.tgz');
  execFileSync('tar', ['-czf', out, ...args, '-C', dir, top], { stdio: 'pipe' });
  return readFileSync(out);
}

/** Where the hostile members would land if anything unpacked them (next to a temporary directory, or absolute). */
const OUTSIDE = ['/tmp/vnfm-evil.yaml', '/tmp/evil.yaml', '/tmp/vnfm-abs', '/tmp/vnfm-up', '/etc/cron.d/vnfm-evil', join(tmpdir(), 'evil.yaml'), join(tmpdir(), 'vnfm-up')];

const EVIL = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n';
const LONG = `helm-cnf/templates/${'deep/'.repeat(20)}../../../../../../../../../../../../../../../../../../../../../../../../tmp/vnfm-evil.yaml`;

const archiveCases: ArchiveCase[] = [
  {
    name: "a '..' member in the header's name",
    archive: () => chartPlus({ name: 'helm-cnf/../../../../tmp/vnfm-evil.yaml', data: EVIL }),
    code: 'chart-slip',
    says: /member name "helm-cnf\/\.\.\/\.\.\/\.\.\/\.\.\/tmp\/vnfm-evil\.yaml" has a '\.\.' segment, which could land outside the chart's directory/,
  },
  {
    name: "a '..' member named by a pax path record",
    archive: () => chartPlus({ name: 'helm-cnf/templates/../../../evil.yaml', data: EVIL, nameAs: 'pax' }),
    code: 'chart-slip',
    says: /member name "helm-cnf\/templates\/\.\.\/\.\.\/\.\.\/evil\.yaml" has a '\.\.' segment/,
  },
  {
    name: "a '..' member named by a GNU long name",
    archive: () => chartPlus({ name: LONG, data: EVIL, nameAs: 'gnu' }),
    code: 'chart-slip',
    says: /member name "helm-cnf\/templates\/deep\/deep\/.*\/tmp\/vnfm-evil\.yaml" has a '\.\.' segment/,
  },
  {
    name: "a '..' member written with backslashes",
    archive: () => chartPlus({ name: 'helm-cnf\\..\\..\\evil.yaml', data: EVIL }),
    code: 'chart-slip',
    says: /member name "helm-cnf\\\\\.\.\\\\\.\.\\\\evil\.yaml" has a '\.\.' segment/,
  },
  {
    name: 'an absolute path',
    archive: () => chartPlus({ name: '/etc/cron.d/vnfm-evil', data: '* * * * * root touch /tmp/pwned\n' }),
    code: 'chart-slip',
    says: /member name "\/etc\/cron\.d\/vnfm-evil" is an absolute path/,
  },
  {
    name: 'an absolute path written by GNU tar -P',
    archive: () => gnuTar(() => undefined, ['-P', '--transform', 's,^helm-cnf,/tmp/vnfm-abs/helm-cnf,']),
    code: 'chart-slip',
    says: /member name "\/tmp\/vnfm-abs\/helm-cnf\/[^"]*" is an absolute path/,
  },
  {
    name: "'..' members written by GNU tar --transform",
    archive: () => gnuTar(() => undefined, ['-P', '--transform', 's,^helm-cnf,helm-cnf/../../vnfm-up,']),
    code: 'chart-slip',
    says: /member name "helm-cnf\/\.\.\/\.\.\/vnfm-up\/[^"]*" has a '\.\.' segment/,
  },
  {
    name: 'a symbolic link to /etc/shadow',
    archive: () => chartPlus({ name: 'helm-cnf/templates/secret.yaml', type: '2', linkname: '/etc/shadow' }),
    code: 'chart-link',
    says: /member "helm-cnf\/templates\/secret\.yaml" is a symbolic link to "\/etc\/shadow"; links could point outside the chart/,
  },
  {
    name: 'a symbolic link packed by GNU tar',
    archive: () => gnuTar((chart) => symlinkSync('../../../../../etc/hostname', join(chart, 'templates/host.yaml'))),
    code: 'chart-link',
    says: /member "helm-cnf\/templates\/host\.yaml" is a symbolic link to "\.\.\/\.\.\/\.\.\/\.\.\/\.\.\/etc\/hostname"/,
  },
  {
    name: 'a hard link to /etc/passwd',
    archive: () => chartPlus({ name: 'helm-cnf/templates/users.yaml', type: '1', linkname: '/etc/passwd' }),
    code: 'chart-link',
    says: /member "helm-cnf\/templates\/users\.yaml" is a hard link to "\/etc\/passwd"/,
  },
  {
    name: 'Chart.yaml itself a symbolic link (no other Chart.yaml)',
    archive: () => buildTarGz([...chartMembers().filter((m) => m.name !== 'helm-cnf/Chart.yaml'), { name: 'helm-cnf/Chart.yaml', type: '2', linkname: '/proc/self/environ' }]),
    code: 'chart-link',
    says: /member "helm-cnf\/Chart\.yaml" is a symbolic link to "\/proc\/self\/environ"/,
  },
  {
    name: 'a character device',
    archive: () => chartPlus({ name: 'helm-cnf/templates/mem', type: '3' }),
    code: 'chart-special-file',
    says: /member "helm-cnf\/templates\/mem" is a character device, not a regular file or folder/,
  },
  {
    name: 'a block device',
    archive: () => chartPlus({ name: 'helm-cnf/disk', type: '4' }),
    code: 'chart-special-file',
    says: /member "helm-cnf\/disk" is a block device/,
  },
  {
    name: 'a FIFO',
    archive: () => chartPlus({ name: 'helm-cnf/templates/pipe.yaml', type: '6' }),
    code: 'chart-special-file',
    says: /member "helm-cnf\/templates\/pipe\.yaml" is a FIFO/,
  },
  {
    name: 'a GNU sparse file (a type no chart holds)',
    archive: () => chartPlus({ name: 'helm-cnf/sparse.bin', type: 'S' }),
    code: 'chart-special-file',
    says: /member "helm-cnf\/sparse\.bin" is a tar entry of type "S"/,
  },
  {
    name: '10,001 members',
    archive: () => chartPlus(...Array.from({ length: 10_001 }, (_, i) => ({ name: `helm-cnf/files/f${i}.txt`, data: '' }))),
    code: 'chart-archive-limit',
    says: /holds more than 10000 members, the limit of a chart archive/,
  },
  {
    name: 'a gzip bomb: 24 MiB of zeros in one file',
    archive: () => chartPlus({ name: 'helm-cnf/files/zeros.bin', data: Buffer.alloc(24 * MiB) }),
    code: 'chart-archive-limit',
    says: /inflates \d+ compressed bytes to more than \d+ \(16 MiB, ratio above 200\): refused as a gzip bomb/,
  },
];

describe('chart archives with hostile members', () => {
  it.each(archiveCases)('vnfpkg-validate refuses $name: exit 2, a finding naming the chart and the member', async (c) => {
    const dir = packageWith(c.archive());
    const r = await validatePackage(dir);
    expect(r.valid).toBe(false);
    const found = r.findings.filter((f) => f.code === c.code);
    expect(found.length, JSON.stringify(r.findings)).toBeGreaterThan(0);
    expect(found[0]).toMatchObject({ severity: 'error', file: ARCHIVE });
    expect(found.map((f) => f.message).join('\n')).toMatch(c.says);
    // With helm there, as an operator has it: the chart is refused before anything is written for helm lint.
    const cli = await run(['vnfpkg-validate', dir], { VNFM_HELM: helmPath() });
    expect(cli.code).toBe(2);
    expect(OUTSIDE.filter((p) => existsSync(p))).toEqual([]);
    expect(cli.stdout + cli.stderr).toContain(ARCHIVE);
    expect(cli.stdout + cli.stderr).toMatch(c.says);
    expect(cli.stderr).toMatch(/is not a valid package/);
  });

  it.each(archiveCases)('vnfpkg-onboard refuses $name: exit 2, nothing onboarded', async (c) => {
    const dir = packageWith(c.archive());
    const onboard = await run(['vnfpkg-onboard', dir, '--name', 'hostile']);
    expect(onboard.code).toBe(2);
    expect(onboard.stderr).toContain(ARCHIVE);
    expect(onboard.stderr).toMatch(c.says);
    const list = await run(['vnfpkg-list', '-o', 'json'], { VNFM_HOME: onboard.home });
    expect(JSON.parse(list.stdout)).toEqual([]);
  });

  it('names every refused member of one archive, not only the first', async () => {
    const gz = chartPlus({ name: 'helm-cnf/../a.yaml', data: EVIL }, { name: 'helm-cnf/templates/b.yaml', type: '2', linkname: '/etc/passwd' }, { name: 'helm-cnf/c', type: '6' });
    const r = await validatePackage(packageWith(gz));
    expect(r.findings.filter((f) => f.file === ARCHIVE).map((f) => f.code)).toEqual(['chart-slip', 'chart-link', 'chart-special-file']);
  });

  it('still refuses an archive past the unpacked-size limit (64 MiB), under the ratio limit', async () => {
    // Blocks of zeros, each with a few random bytes: compresses about 60 times, under the ratio of 200.
    const data = Buffer.alloc(65 * MiB);
    for (let i = 0; i < data.length; i += 256) data.writeUInt32LE((Math.random() * 2 ** 32) >>> 0, i);
    const gz = chartPlus({ name: 'helm-cnf/files/big.bin', data });
    expect(gz.length * 200).toBeGreaterThan(64 * MiB);
    const r = await validatePackage(packageWith(gz));
    expect(r.findings.find((f) => f.code === 'chart-archive-limit')).toMatchObject({ file: ARCHIVE, message: 'unpacks to more than 64 MiB, the limit of a chart archive' });
  });

  it('reads a well-formed archive written with pax and GNU long names, as helm package writes long paths', async () => {
    const long = `helm-cnf/templates/${'x'.repeat(120)}.yaml`;
    const gz = buildTarGz([...chartMembers(), { name: long, data: EVIL, nameAs: 'pax' }, { name: `${long}.2`, data: EVIL, nameAs: 'gnu' }]);
    expect(
      readTarGz(gz)
        .map((e) => e.name)
        .filter((x) => x.includes('xxx')),
    ).toEqual([long, `${long}.2`]);
    const r = await validatePackage(packageWith(gz));
    expect(r.findings.filter((f) => f.severity !== 'info')).toEqual([]);
    expect(r.helmCharts).toEqual([{ path: ARCHIVE, form: 'archive', name: 'helm-cnf', version: '0.1.0' }]);
  });

  it('does not judge a tarball that holds no chart as one: its links are its own business', async () => {
    const dir = variant((d) =>
      writeFileSync(
        join(d, 'Files/rootfs.tar.gz'),
        buildTarGz([
          { name: 'rootfs/bin/sh', type: '2', linkname: '/bin/busybox' },
          { name: 'rootfs/README', data: 'x' },
        ]),
      ),
    );
    const r = await validatePackage(dir);
    expect(r.valid).toBe(true);
    expect(r.helmCharts.map((c) => c.path)).toEqual([CHART_DIR]);
  });

  it('refuses a tar whose header checksum is wrong, as broken', async () => {
    const tar = buildTar(chartMembers());
    tar[0] = tar[0]! ^ 0x20;
    const r = await validatePackage(packageWith(gzipSync(tar)));
    expect(r.findings.find((f) => f.file === ARCHIVE)).toMatchObject({ code: 'helm-chart-unreadable', message: expect.stringMatching(/wrong checksum/) });
  });
});

// ---------------------------------------------------------------------------
// Charts that reach beyond the instance

const REACH_TEMPLATES = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ .Release.Name }}-admin
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
  - kind: ServiceAccount
    name: default
    namespace: {{ .Release.Namespace }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ .Release.Name }}-reader
rules:
  - apiGroups: [""]
    resources: ["secrets"]
    verbs: ["get", "list"]
---
apiVersion: v1
kind: Namespace
metadata:
  name: {{ .Release.Name }}-side
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: {{ .Release.Name }}-pv
spec:
  capacity:
    storage: 1Gi
  accessModes: [ReadWriteOnce]
  hostPath:
    path: /
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: {{ .Release.Name }}-fast
provisioner: kubernetes.io/no-provisioner
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: {{ .Release.Name }}-gate
webhooks: []
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: {{ .Release.Name }}-inject
webhooks: []
---
apiVersion: example.com/v1
kind: Gadget
metadata:
  name: {{ .Release.Name }}-gadget
spec: {}
`;

const OTHER_NAMESPACES = `apiVersion: v1
kind: Secret
metadata:
  name: stolen
  namespace: kube-system
stringData:
  token: x
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: fixed
  namespace: default
data: {}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: own
  namespace: {{ .Release.Namespace }}
data: {}
`;

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Cluster
  names:
    kind: Gadget
    plural: gadgets
    singular: gadget
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
`;

/** The sample with a chart that reaches beyond its instance, as a directory or (archive) packed by GNU tar. */
function reachingPackage(form: 'directory' | 'archive'): string {
  return variant((dir) => {
    const chart = join(dir, CHART_DIR);
    writeFileSync(join(chart, 'templates/cluster.yaml'), REACH_TEMPLATES);
    writeFileSync(join(chart, 'templates/elsewhere.yaml'), OTHER_NAMESPACES);
    mkdirSync(join(chart, 'crds'));
    writeFileSync(join(chart, 'crds/gadgets.yaml'), CRD);
    if (form === 'archive') {
      execFileSync('tar', ['-czf', join(dir, ARCHIVE), '-C', join(dir, 'Files/kubernetes'), 'helm-cnf']);
      rmSync(chart, { recursive: true });
    }
  });
}

/** Each object beyond the instance, as the findings must name it: [code, template, kind name (and namespace)]. */
const BEYOND: Array<[string, string, RegExp]> = [
  [
    'kubernetes-cluster-scoped',
    'templates/cluster.yaml',
    /^creates ClusterRoleBinding vnfpkg-validate-admin \(cluster-scoped; it grants ClusterRole cluster-admin\): it acts on the whole cluster, beyond the namespace the chart is installed in$/,
  ],
  ['kubernetes-cluster-scoped', 'templates/cluster.yaml', /^creates ClusterRole vnfpkg-validate-reader \(cluster-scoped\): it acts on the whole cluster/],
  ['kubernetes-cluster-scoped', 'templates/cluster.yaml', /^creates Namespace vnfpkg-validate-side \(cluster-scoped\)/],
  ['kubernetes-cluster-scoped', 'templates/cluster.yaml', /^creates PersistentVolume vnfpkg-validate-pv \(cluster-scoped\)/],
  ['kubernetes-cluster-scoped', 'templates/cluster.yaml', /^creates StorageClass vnfpkg-validate-fast \(cluster-scoped\)/],
  ['kubernetes-cluster-scoped', 'templates/cluster.yaml', /^creates ValidatingWebhookConfiguration vnfpkg-validate-gate \(cluster-scoped\)/],
  ['kubernetes-cluster-scoped', 'templates/cluster.yaml', /^creates MutatingWebhookConfiguration vnfpkg-validate-inject \(cluster-scoped\)/],
  ['kubernetes-cluster-scoped', 'templates/cluster.yaml', /^creates Gadget vnfpkg-validate-gadget \(cluster-scoped\)/],
  ['kubernetes-cluster-scoped', 'crds/gadgets.yaml', /^creates CustomResourceDefinition gadgets\.example\.com \(cluster-scoped\)/],
  ['kubernetes-other-namespace', 'templates/elsewhere.yaml', /^creates Secret stolen \(in namespace kube-system\): not in the namespace the chart is installed in$/],
  ['kubernetes-other-namespace', 'templates/elsewhere.yaml', /^creates ConfigMap fixed \(in namespace default\): not in the namespace the chart is installed in$/],
];

describe('Helm charts that reach beyond the instance, rendered by the real helm', () => {
  const renderer = createChartRenderer(createHelmChartTool({ executable: helmPath(), env: {} }));

  it.each(['directory', 'archive'] as const)('warns of each cluster-scoped object and each object in another namespace, naming its template (chart %s)', async (form) => {
    const r = await validatePackage(reachingPackage(form), { chartRenderer: renderer });
    const chart = form === 'directory' ? CHART_DIR : ARCHIVE;
    expect(r.valid).toBe(true);
    const reach = r.findings.filter((f) => f.code.startsWith('kubernetes-'));
    expect(reach).toHaveLength(BEYOND.length);
    for (const [code, template, message] of BEYOND) {
      const f = reach.find((x) => x.code === code && message.test(x.message));
      expect(f, `${code} ${String(message)} in ${JSON.stringify(reach.map((x) => x.message))}`).toBeDefined();
      expect(f).toMatchObject({ severity: 'warning', file: `${chart} (helm-cnf/${template})` });
      expect(f!.hint).toMatch(/--strict refuses such a chart/);
    }
    // The ConfigMap in the release's namespace is the instance's own.
    expect(reach.map((f) => f.message).join('\n')).not.toMatch(/ConfigMap own/);
  });

  it('refuses them all under strict: each an error', async () => {
    const r = await validatePackage(reachingPackage('archive'), { chartRenderer: renderer, strict: true });
    expect(r.valid).toBe(false);
    const errors = r.findings.filter((f) => f.severity === 'error');
    expect(errors.map((f) => f.code).sort()).toEqual(BEYOND.map(([code]) => code).sort());
    expect(errors[0]!.hint).toMatch(/^refused under --strict/);
  });

  it('says nothing of the sample, whose objects all stay in its namespace, strict or not', async () => {
    const r = await validatePackage(SAMPLE, { chartRenderer: renderer, strict: true });
    expect(r.findings.filter((f) => f.severity !== 'info')).toEqual([]);
  });

  it('vnfpkg-validate warns (exit 0) and vnfpkg-validate --strict refuses (exit 2), naming each object', async () => {
    const dir = reachingPackage('archive');
    const env = { VNFM_HELM: helmPath() };
    const warned = await run(['vnfpkg-validate', dir], env);
    expect(warned.code).toBe(0);
    expect(warned.stderr).toMatch(new RegExp(`is a valid package \\(vnfdId [^)]+\\), with ${BEYOND.length} warning\\(s\\)`));
    expect(warned.stdout).toMatch(/ClusterRoleBinding vnfpkg-validate-admin \(cluster-scoped; it grants ClusterRole cluster-admin\)/);
    expect(warned.stdout).toMatch(/Secret stolen \(in namespace kube-system\)/);
    const strict = await run(['vnfpkg-validate', dir, '--strict', '-o', 'json'], env);
    expect(strict.code).toBe(2);
    const doc = JSON.parse(strict.stdout) as { valid: boolean; findings: Array<{ severity: string; code: string; message: string }> };
    expect(doc.valid).toBe(false);
    expect(doc.findings.filter((f) => f.severity === 'error')).toHaveLength(BEYOND.length);
    expect(strict.stderr).toMatch(new RegExp(`is not a valid package: ${BEYOND.length} error\\(s\\)`));
  });
});
