/**
 * Package commands through the real program: every sample validates and
 * onboards; broken packages are refused with their finding, exit 2, and
 * leave nothing behind.
 */
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newHome, vnfm } from '../support/cli.js';

const samples = resolve(import.meta.dirname, '../../csar-samples');
const trees = [
  'basic-cnf/package',
  'basic-cnf/package-v2',
  'kuryr-cnf/package',
  'heat-vnf/package',
  'capi-mgmt/package',
  'capi-capo-workload/package',
  'capi-capo-workload/package-v2',
  'capi-kamaji-kubevirt-workload/package',
];
const work = mkdtempSync(join(tmpdir(), 'vnfm-pkg-'));

/** A copy of a sample tree to break. */
function copyOf(tree: string): string {
  const dir = mkdtempSync(join(work, 'tree-'));
  cpSync(join(samples, tree), dir, { recursive: true });
  return dir;
}

const storedPackages = async (home: string) => JSON.parse((await vnfm(['vnfpkg-list', '-o', 'json'], { home })).stdout) as { id: string }[];
const leftovers = (home: string) => (existsSync(join(home, 'packages')) ? readdirSync(join(home, 'packages')) : []);

describe('samples', () => {
  it.each(trees)('%s validates clean, builds reproducibly, and onboards', async (tree) => {
    const home = newHome();
    const v = await vnfm(['vnfpkg-validate', join(samples, tree), '-o', 'json'], { home });
    expect(v.code, v.stdout + v.stderr).toBe(0);
    const report = JSON.parse(v.stdout);
    expect(report.valid).toBe(true);
    expect(report.findings.filter((f: { severity: string }) => f.severity !== 'info')).toEqual([]);

    const zip1 = join(work, `${tree.replace(/\W/g, '_')}-1.zip`);
    const zip2 = join(work, `${tree.replace(/\W/g, '_')}-2.zip`);
    expect((await vnfm(['vnfpkg-build', join(samples, tree), '-o', zip1], { home })).code).toBe(0);
    expect((await vnfm(['vnfpkg-build', join(samples, tree), '-o', zip2], { home })).code).toBe(0);
    expect(readFileSync(zip1).equals(readFileSync(zip2))).toBe(true);

    const on = await vnfm(['vnfpkg-onboard', zip1, '-o', 'json'], { home });
    expect(on.code, on.stderr).toBe(0);
    const pkg = JSON.parse(on.stdout);
    expect(pkg).toMatchObject({ vnfdId: report.vnfdId, onboardingState: 'ONBOARDED', operationalState: 'ENABLED', usageState: 'NOT_IN_USE' });
    const back = join(work, `${tree.replace(/\W/g, '_')}-back.zip`);
    expect((await vnfm(['vnfpkg-download', pkg.vnfdId, '-o', back], { home })).code).toBe(0);
    expect(readFileSync(back).equals(readFileSync(zip1))).toBe(true);
  });
});

describe('package lifecycle', () => {
  it('finds packages by id, vnfdId and name; disables, refuses duplicates, deletes with the stored copy', async () => {
    const home = newHome();
    const on = await vnfm(['vnfpkg-onboard', join(samples, 'basic-cnf/package'), '--name', 'basic', '--user-data', 'owner=nfv', '-o', 'json'], { home });
    expect(on.code, on.stderr).toBe(0);
    const pkg = JSON.parse(on.stdout);
    expect(pkg.userDefinedData).toEqual({ owner: 'nfv' });
    expect(pkg.flavours[0]).toMatchObject({ id: 'simple', defaultLevel: 'instantiation_level_1' });
    for (const ref of [pkg.id, pkg.vnfdId, 'basic']) {
      expect(JSON.parse((await vnfm(['vnfpkg-show', ref, '-o', 'json', '-c', 'id'], { home })).stdout)).toEqual({ id: pkg.id });
    }
    const dup = await vnfm(['vnfpkg-onboard', join(samples, 'basic-cnf/package')], { home });
    expect(dup.code).toBe(4);
    expect(dup.stderr).toMatch(/already onboarded/);
    expect(leftovers(home)).toEqual([pkg.id]);

    const dis = await vnfm(['vnfpkg-update', 'basic', '--operational-state', 'DISABLED', '-o', 'json'], { home });
    expect(JSON.parse(dis.stdout).operationalState).toBe('DISABLED');
    expect((await vnfm(['vnfpkg-update', 'basic', '--operational-state', 'BROKEN'], { home })).code).toBe(2);

    const vnfd = await vnfm(['vnfpkg-vnfd', 'basic'], { home });
    expect(vnfd.stdout).toBe(readFileSync(join(samples, 'basic-cnf/package/Definitions/basic_cnf_top.vnfd.yaml'), 'utf8'));
    const all = await vnfm(['vnfpkg-vnfd', 'basic', '--all'], { home });
    expect(all.stdout).toMatch(/# Definitions\/basic_cnf_df_simple\.yaml/);

    expect((await vnfm(['vnfpkg-delete', 'basic'], { home })).code).toBe(2);
    const del = await vnfm(['vnfpkg-delete', '--yes', 'basic'], { home });
    expect(del.code, del.stderr).toBe(0);
    expect(await storedPackages(home)).toEqual([]);
    expect(leftovers(home)).toEqual([]);
    expect((await vnfm(['vnfpkg-show', 'basic'], { home })).code).toBe(3);
  });
});

describe('the stored copy', () => {
  it('onboarding keeps the zip alone, and every reader gets the bytes of the package', async () => {
    const home = newHome();
    const zip = join(work, 'one-copy.zip');
    expect((await vnfm(['vnfpkg-build', join(samples, 'basic-cnf/package'), '-o', zip], { home })).code).toBe(0);
    const fromZip = JSON.parse((await vnfm(['vnfpkg-onboard', zip, '-o', 'json'], { home })).stdout) as { id: string; checksum: { hash: string } };
    expect(readdirSync(join(home, 'packages', fromZip.id))).toEqual(['package.zip']);
    expect(readFileSync(join(home, 'packages', fromZip.id, 'package.zip')).equals(readFileSync(zip))).toBe(true);
    expect(fromZip.checksum.hash).toBe(createHash('sha256').update(readFileSync(zip)).digest('hex'));

    expect(leftovers(home)).toEqual([fromZip.id]);
    // A directory is built into the one zip.
    const other = newHome();
    const fromDir = await vnfm(['vnfpkg-onboard', join(samples, 'basic-cnf/package'), '-o', 'json'], { home: other });
    expect(fromDir.code, fromDir.stderr).toBe(0);
    const dirPkg = JSON.parse(fromDir.stdout) as { id: string };
    expect(readdirSync(join(other, 'packages', dirPkg.id))).toEqual(['package.zip']);
    expect(leftovers(other)).toEqual([dirPkg.id]);

    const vnfd = await vnfm(['vnfpkg-vnfd', fromZip.id, '--all'], { home });
    for (const file of ['basic_cnf_top.vnfd.yaml', 'basic_cnf_df_simple.yaml', 'basic_cnf_types.yaml']) {
      expect(vnfd.stdout).toContain(readFileSync(join(samples, 'basic-cnf/package/Definitions', file), 'utf8'));
    }
    const back = join(work, 'one-copy-back.zip');
    expect((await vnfm(['vnfpkg-download', fromZip.id, '--file', back], { home })).code).toBe(0);
    expect(readFileSync(back).equals(readFileSync(zip))).toBe(true);
  });

  it('a member large enough to be hashed in a thread of its own validates and onboards through the program', async () => {
    const home = newHome();
    const tree = copyOf('basic-cnf/package');
    mkdirSync(join(tree, 'Files/images'), { recursive: true });
    const image = randomBytes(17 * 1024 * 1024);
    writeFileSync(join(tree, 'Files/images/disk.qcow2'), image);
    writeFileSync(
      join(tree, 'TOSCA-Metadata/TOSCA.meta'),
      readFileSync(join(tree, 'TOSCA-Metadata/TOSCA.meta'), 'utf8') + '\nName: Files/images/disk.qcow2\nContent-Type: application/x-iso9066-image\n',
    );
    const zip = join(work, 'large-member.zip');
    expect((await vnfm(['vnfpkg-build', tree, '--file', zip], { home })).code).toBe(0);
    const v = await vnfm(['vnfpkg-validate', zip], { home });
    expect(v.code, v.stdout + v.stderr).toBe(0);
    const on = await vnfm(['vnfpkg-onboard', zip, '-o', 'json'], { home });
    expect(on.code, on.stderr).toBe(0);
    const pkg = JSON.parse(on.stdout) as { id: string; checksum: { hash: string } };
    expect(pkg.checksum.hash).toBe(createHash('sha256').update(readFileSync(zip)).digest('hex'));
    expect(readdirSync(join(home, 'packages', pkg.id))).toEqual(['package.zip']);
  });

  it('a store that kept the members unpacked beside the zip is read from the zip, and loses the second copy once', async () => {
    const home = newHome();
    const on = await vnfm(['vnfpkg-onboard', join(samples, 'basic-cnf/package'), '-o', 'json'], { home });
    const pkg = JSON.parse(on.stdout) as { id: string };
    // What onboarding left before: content/ holding the members.
    const content = join(home, 'packages', pkg.id, 'content');
    cpSync(join(samples, 'basic-cnf/package'), content, { recursive: true });
    const zipBefore = readFileSync(join(home, 'packages', pkg.id, 'package.zip'));

    const vnfd = await vnfm(['vnfpkg-vnfd', pkg.id], { home });
    expect(vnfd.code, vnfd.stderr).toBe(0);
    expect(vnfd.stdout).toBe(readFileSync(join(samples, 'basic-cnf/package/Definitions/basic_cnf_top.vnfd.yaml'), 'utf8'));
    expect(readdirSync(join(home, 'packages', pkg.id))).toEqual(['package.zip']);
    expect(readFileSync(join(home, 'packages', pkg.id, 'package.zip')).equals(zipBefore)).toBe(true);
    expect(leftovers(home)).toEqual([pkg.id]);
    expect((await vnfm(['vnfpkg-vnfd', pkg.id], { home })).stdout).toBe(vnfd.stdout);
  });
});

type Breakage = [name: string, code: string, file: RegExp, breakTree: (dir: string) => void];

const breakages: Breakage[] = [
  ['no TOSCA.meta', 'tosca-meta-missing', /TOSCA-Metadata\/TOSCA\.meta|package/, (d) => rmSync(join(d, 'TOSCA-Metadata'), { recursive: true })],
  [
    'Entry-Definitions names a missing file',
    'entry-definitions-missing',
    /TOSCA\.meta/,
    (d) => edit(d, 'TOSCA-Metadata/TOSCA.meta', (t) => t.replace(/Entry-Definitions: \S+/, 'Entry-Definitions: Definitions/nope.yaml')),
  ],
  ['a manifest changed after hashing', 'hash-mismatch', /deployment_vdu1\.yaml/, (d) => edit(d, 'Files/kubernetes/deployment_vdu1.yaml', (t) => t + '\n# changed\n')],
  ['a listed member is missing', 'listed-member-missing', /TOSCA\.meta/, (d) => rmSync(join(d, 'Files/kubernetes/service.yaml'))],
  [
    'a VNFD syntax error',
    'yaml-syntax',
    /basic_cnf_df_simple\.yaml/,
    (d) => edit(d, 'Definitions/basic_cnf_df_simple.yaml', (t) => t.replace('topology_template:', 'topology_template: [oops')),
  ],
  [
    'an import that does not resolve',
    'import-unresolved',
    /basic_cnf_top\.vnfd\.yaml/,
    (d) => edit(d, 'Definitions/basic_cnf_top.vnfd.yaml', (t) => t.replace('- basic_cnf_types.yaml', '- missing_types.yaml')),
  ],
  [
    'an aspect delta for a missing VDU',
    'policy-target-missing',
    /basic_cnf_df_simple\.yaml/,
    (d) => edit(d, 'Definitions/basic_cnf_df_simple.yaml', (t) => t.replace(/targets: \[ ?VDU1 ?\]/, 'targets: [ VDU9 ]')),
  ],
  [
    'a removed apiVersion',
    'removed-api-version',
    /deployment_vdu2\.yaml/,
    (d) => edit(d, 'Files/kubernetes/deployment_vdu2.yaml', (t) => t.replace('apiVersion: apps/v1', 'apiVersion: extensions/v1beta1'), true),
  ],
];

function edit(dir: string, path: string, change: (text: string) => string, rehash = false): void {
  const file = join(dir, path);
  const before = readFileSync(file, 'utf8');
  const after = change(before);
  if (after === before) throw new Error(`the breakage did not change ${path}`);
  writeFileSync(file, after);
  if (rehash) {
    // Keep TOSCA.meta's hash right, so only the intended finding appears.
    const meta = join(dir, 'TOSCA-Metadata/TOSCA.meta');
    const text = readFileSync(meta, 'utf8');
    const re = new RegExp(`(Name: ${path.replace(/[.]/g, '\\.')}\\n(?:.+\\n)*?Hash: )([0-9a-f]+)`);
    writeFileSync(meta, text.replace(re, `$1${createHash('sha256').update(after).digest('hex')}`));
  }
}

describe('broken packages: exit 2, their finding, nothing stored, nothing left behind', () => {
  it.each(breakages)('%s', async (_name, code, file, breakTree) => {
    const dir = copyOf('basic-cnf/package');
    breakTree(dir);
    const home = newHome();
    const v = await vnfm(['vnfpkg-validate', dir, '-o', 'json'], { home });
    expect(v.code, v.stderr).toBe(2);
    const report = JSON.parse(v.stdout);
    expect(report.valid).toBe(false);
    const finding = report.findings.find((f: { code: string }) => f.code === code);
    expect(finding, JSON.stringify(report.findings, null, 1)).toBeDefined();
    expect(finding.file ?? 'package').toMatch(file);
    expect(finding.hint).toMatch(/\w/);

    const table = await vnfm(['vnfpkg-validate', dir], { home });
    expect(table.code).toBe(2);
    expect(table.stdout).toContain(code);
    expect(table.stderr).toMatch(/is not a valid package: \d+ error/);

    const on = await vnfm(['vnfpkg-onboard', dir], { home });
    expect(on.code).toBe(2);
    expect(await storedPackages(home)).toEqual([]);
    expect(leftovers(home)).toEqual([]);
  });
});
