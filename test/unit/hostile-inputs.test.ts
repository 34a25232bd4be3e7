/**
 * Hostile and careless inputs through the real command layer (in-process
 * main(), argv in, exit code and stderr out): zip bombs, lying central
 * directories, request files nested thousands deep, FIFOs and devices where a
 * file is expected, values megabytes long, a blank ssl_ca_cert. Every one is
 * refused with exit 2 and a message naming the file and the fix; none
 * crashes, hangs or writes more than the limits allow.
 *
 * The corpus of store-import documents (ids that are paths, a row sealed
 * under another key, a zip that is not its record's, lines past the bound,
 * ids twice, two default VIMs) is store-import-hostile.test.ts, run on both
 * store backends.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { readHeatEnvironments } from '../../src/lcm/heat-files.js';
import { clip, echo, UsageError } from '../../src/errors.js';
import { parseSize } from '../../src/cli/commands/vnfpkg/limits.js';
import { startSandbox, writeSandboxConfigs, type Sandbox } from '@vnfm/kube-sandbox';
import { openStore } from '../../src/store/index.js';
import { onTerminal } from '../support/cli.js';
import { buildZip, goodPackageMembers, zeroBomb, type RawEntry } from '../support/zip-builder.js';

const tmp = mkdtempSync(join(tmpdir(), 'vnfm-hostile-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf/package');

function file(name: string, content: string | Buffer): string {
  const path = join(tmp, name);
  writeFileSync(path, content);
  return path;
}

function fifo(name: string): string {
  const path = join(tmp, name);
  execFileSync('mkfifo', [path]);
  return path;
}

/** Bytes this process has passed to write(2) and friends so far (Linux). */
function bytesWritten(): number {
  return Number(/^wchar:\s*(\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
}

async function run(argv: string[], home = join(mkdtempSync(join(tmp, 'h-')), 'home'), env: Record<string, string> = {}) {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (d: Buffer) => (stdout += d.toString()));
  err.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await main(argv, { env: { VNFM_HOME: home, HOME: tmp, ...env }, cwd: tmp, streams: { stdin: new PassThrough(), stdout: out, stderr: err } });
  return { code, stdout, stderr, home };
}

/** 300 members of 16 MiB of zeros (16 KiB compressed each): the bomb under the per-member ratio floor. */
function zeroMembers(count: number, declaredSize?: number): RawEntry[] {
  const b = zeroBomb(1);
  return Array.from({ length: count }, (_, i) => ({ name: `Files/zeros/${i}.bin`, payload: b.payload, size: declaredSize ?? b.size, crc: 0 }));
}

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

const HEAT_SAMPLE = resolve(import.meta.dirname, '../../csar-samples/heat-vnf/package');
const SHIPPED_IMAGE = 'the image the package actually carries';
const DESCRIBED_IMAGE = 'the image the VNFD was written for';
const sha512 = (text: string) => createHash('sha512').update(text).digest('hex');

/** The heat-vnf sample carrying VDU1's image, whose sw_image_data checksum is another image's (a swapped image). */
function lyingImagePackage(name: string): string {
  const dir = join(tmp, name);
  cpSync(HEAT_SAMPLE, dir, { recursive: true });
  mkdirSync(join(dir, 'Files', 'images'), { recursive: true });
  writeFileSync(join(dir, 'Files', 'images', 'app.qcow2'), SHIPPED_IMAGE);
  const df = join(dir, 'Definitions', 'heat_vnf_df_simple.yaml');
  const doc = yaml.load(readFileSync(df, 'utf8')) as {
    topology_template: { node_templates: Record<string, { properties: Record<string, Record<string, unknown>>; artifacts?: unknown }> };
  };
  const vdu = doc.topology_template.node_templates['VDU1']!;
  vdu.properties['sw_image_data']!['checksum'] = { algorithm: 'sha-512', hash: sha512(DESCRIBED_IMAGE) };
  vdu.artifacts = { sw_image: { type: 'tosca.artifacts.nfv.SwImage', file: '../Files/images/app.qcow2' } };
  writeFileSync(df, yaml.dump(doc));
  return dir;
}
const imageLie = new RegExp(
  `sw_image_data of VDU1 declares SHA-512 ${sha512(DESCRIBED_IMAGE)} for Files/images/app\\.qcow2, but Files/images/app\\.qcow2 has ${sha512(SHIPPED_IMAGE)}`,
);
const KUBE = 'auth_url: https://127.0.0.1:6443\ntype: kubernetes\nproject_name: default\nbearer_token: t\n';

interface Case {
  name: string;
  argv: () => string[];
  env?: () => Record<string, string>;
  /** What stderr must say (the problem, the file or field, the fix). */
  says: RegExp[];
}

const cases: Case[] = [
  {
    name: 'vnfpkg-onboard of a bomb of 300 members × 16 MiB of zeros (a 4.9 MB zip)',
    argv: () => ['vnfpkg-onboard', file('bomb.zip', buildZip([...goodPackageMembers(), ...zeroMembers(300)]))],
    says: [/bomb\.zip: inflates \d+ compressed bytes to \d+ \(4\.7 GiB, ratio \d+\), more than the ratio limit of 200: refused as a zip bomb/, /hint: .*--max-ratio \d+/],
  },
  {
    name: 'vnfpkg-validate of the same bomb',
    argv: () => ['vnfpkg-validate', file('bomb2.zip', buildZip([...goodPackageMembers(), ...zeroMembers(300)]))],
    says: [/ratio limit of 200/],
  },
  {
    name: 'vnfpkg-validate of a bomb whose central directory declares 1000 bytes a member',
    argv: () => ['vnfpkg-validate', file('liar.zip', buildZip([...goodPackageMembers(), ...zeroMembers(300, 1000)]))],
    says: [/member Files\/zeros\/0\.bin inflates past its declared size of 1000 bytes/, /member Files\/zeros\/299\.bin inflates past/],
  },
  {
    name: 'vnfpkg-onboard over --max-unpacked-size',
    argv: () => ['vnfpkg-onboard', SAMPLE, '--max-unpacked-size', '1KiB'],
    says: [/more than the limit of 1 KiB/, /hint: .*--max-unpacked-size \d+KiB/],
  },
  { name: 'vnfpkg-onboard over --max-members', argv: () => ['vnfpkg-onboard', SAMPLE, '--max-members', '3'], says: [/more than 3 files and folders/, /--max-members/] },
  {
    name: 'vnfpkg-onboard with a --max-unpacked-size that is no size',
    argv: () => ['vnfpkg-onboard', SAMPLE, '--max-unpacked-size', 'lots'],
    says: [/--max-unpacked-size "lots" is not a size/],
  },
  {
    name: 'vnfpkg-validate of a package whose image is not the one its sw_image_data checksum describes',
    argv: () => ['vnfpkg-validate', lyingImagePackage('lying-image-v')],
    says: [imageLie, /is not a valid package: 1 error/],
  },
  {
    name: 'vnfpkg-onboard of a package whose image lies',
    argv: () => ['vnfpkg-onboard', lyingImagePackage('lying-image-o')],
    says: [imageLie],
  },
  { name: 'vnfpkg-validate of a FIFO', argv: () => ['vnfpkg-validate', fifo('pkg.fifo')], says: [/pkg\.fifo is neither a regular file nor a directory/] },
  {
    name: 'a request file nested 5,000 deep (JSON)',
    argv: () => ['vnf-instantiate', 'x', '--request-file', file('deep.json', nested(5000))],
    says: [/deep\.json: nests deeper than 100 levels/],
  },
  {
    name: 'a request file nested 1,000 deep (YAML block mappings)',
    argv: () => ['vnf-instantiate', 'x', '--request-file', file('deep.yaml', Array.from({ length: 1000 }, (_, i) => `${' '.repeat(i)}a:`).join('\n'))],
    says: [/deep\.yaml: is neither JSON nor YAML: nesting exceeded maxDepth \(100\)/],
  },
  {
    name: 'a request file of YAML aliases that expand past a million values',
    argv: () => [
      'vnf-instantiate',
      'x',
      '--request-file',
      file(
        'laughs.yaml',
        ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...'bcdefg'.split('').map((k, i) => `${k}: &${k} [${Array(10).fill(`*${'abcdefg'[i]}`).join(', ')}]`)].join('\n'),
      ),
    ],
    says: [/laughs\.yaml: expands to more than 1000000 values/],
  },
  {
    name: 'a FIFO as --request-file',
    argv: () => ['vnf-instantiate', 'x', '--request-file', fifo('req.fifo')],
    says: [/cannot read request file .*req\.fifo: it is a FIFO \(named pipe\), not a regular file/],
  },
  { name: '/dev/zero as --request-file', argv: () => ['vnf-terminate', 'x', '--request-file', '/dev/zero'], says: [/\/dev\/zero: it is a character device, not a regular file/] },
  { name: 'a directory as --request-file', argv: () => ['vnf-heal', 'x', '--request-file', tmp], says: [/it is a directory, not a regular file/] },
  {
    name: 'a request file over 4 MiB',
    argv: () => ['vnf-instantiate', 'x', '--request-file', file('huge.json', JSON.stringify({ flavourId: 'x'.repeat(5 * 1024 * 1024) }))],
    says: [/huge\.json: it is 5242\d{3} bytes, more than the 4194304 accepted/],
  },
  {
    name: 'a FIFO as --config-file',
    argv: () => ['vim-register', 'v', '--no-check', '--config-file', fifo('cfg.fifo')],
    says: [/cfg\.fifo: is a FIFO \(named pipe\), not a regular file/],
  },
  {
    name: 'a FIFO as --kubeconfig',
    argv: () => ['vim-register', 'v', '--no-check', '--kubeconfig', fifo('kube.fifo')],
    says: [/kube\.fifo: is a FIFO \(named pipe\), not a regular file/],
  },
  {
    name: 'a FIFO as clouds.yaml (OS_CLIENT_CONFIG_FILE)',
    argv: () => ['vim-register', 'v', '--no-check', '--os-cloud', 'lab'],
    env: () => ({ OS_CLIENT_CONFIG_FILE: fifo('clouds.fifo') }),
    says: [/clouds\.fifo: is a FIFO \(named pipe\), not a regular file/],
  },
  {
    name: 'a vim-config whose auth_url is 3 MB long',
    argv: () => [
      'vim-register',
      'v',
      '--no-check',
      '--config-file',
      file('long.yaml', `auth_url: "${'h'.repeat(3_000_000)}"\ntype: kubernetes\nproject_name: default\nbearer_token: t\n`),
    ],
    says: [/auth_url \(line 1\): "h{199}… \(2999802 more characters\) is not a URL with a scheme and a host/],
  },
  {
    name: 'a package name a million characters long',
    argv: () => ['vnfpkg-onboard', SAMPLE, '--name', `-${'n'.repeat(1_000_000)}`],
    says: [/"-n{198}… \(999803 more characters\) is not a usable package name/],
  },
  {
    name: 'a VIM name a million characters long',
    argv: () => ['vim-register', ` ${'v'.repeat(1_000_000)}`, '--no-check', '--config-file', file('ok.yaml', KUBE)],
    says: [/" v{198}… \(999803 more characters\) is not a usable VIM name/],
  },
  {
    name: 'a vim-config with a blank ssl_ca_cert',
    argv: () => ['vim-register', 'v', '--no-check', '--config-file', file('blank-ca.yaml', `${KUBE}ssl_ca_cert:\n`)],
    says: [/blank-ca\.yaml: ssl_ca_cert \(line 5\): is blank/, /hint: .*ssl_ca_cert: None to skip TLS verification explicitly/],
  },
  {
    name: 'a vim-config with ssl_ca_cert: ~',
    argv: () => ['vim-register', 'v', '--no-check', '--config-file', file('tilde-ca.yaml', `${KUBE}ssl_ca_cert: ~\n`)],
    says: [/ssl_ca_cert \(line 5\): is blank/],
  },
];

/** What each case did, for the figures below. */
const seen: Array<{ name: string; code: number; crashed: boolean; ms: number }> = [];

describe('hostile inputs through the command line', () => {
  it.each(cases)(
    '$name: exit 2, saying what and where',
    async ({ name, argv, env, says }) => {
      const args = argv();
      const t0 = Date.now();
      const r = await run(args, undefined, env?.());
      seen.push({ name, code: r.code, crashed: /unexpected failure/.test(r.stderr), ms: Date.now() - t0 });
      expect(r.stderr).not.toMatch(/unexpected failure|Maximum call stack/);
      expect(r.code).toBe(2);
      // vnfpkg-validate prints its findings on stdout, the verdict on stderr.
      for (const re of says) expect(r.stdout + r.stderr).toMatch(re);
      // Nothing echoed whole: no message carries the megabytes it was given.
      const longest = Math.max(...(r.stdout + r.stderr).split('\n').map((l) => l.length));
      expect(longest).toBeLessThan(2500);
    },
    30_000,
  );

  it('the bombs write (almost) nothing: refused before unpacking, or stopped at the declared size', async () => {
    const bomb = file('bomb-w.zip', buildZip([...goodPackageMembers(), ...zeroMembers(300)]));
    const liar = file('liar-w.zip', buildZip([...goodPackageMembers(), ...zeroMembers(300, 1000)]));
    const figures: Record<string, number> = {};
    for (const [name, path] of [
      ['bomb', bomb],
      ['liar', liar],
    ] as const) {
      const home = join(mkdtempSync(join(tmp, 'w-')), 'home');
      const before = bytesWritten();
      const t0 = Date.now();
      const r = await run(['vnfpkg-onboard', path], home);
      figures[`${name}Bytes`] = bytesWritten() - before;
      figures[`${name}Ms`] = Date.now() - t0;
      expect(r.code).toBe(2);
      // No package directory is left behind under VNFM_HOME.
      expect(execFileSync('find', [join(home, 'packages'), '-type', 'f']).toString()).toBe('');
    }
    // The 4.7 GiB it would inflate to, against what was written: the store's own files and the copy of
    // the 4.9 MB zip at most, far below the 8 GiB cap and the 4.7 GiB the bomb holds.
    expect(figures['bombBytes']).toBeLessThan(16 * 1024 * 1024);
    expect(figures['liarBytes']).toBeLessThan(16 * 1024 * 1024);
    console.info(
      `hostile-inputs: bytes written during onboarding: bomb ${figures['bombBytes']} (${figures['bombMs']} ms), lying central directory ${figures['liarBytes']} (${figures['liarMs']} ms)`,
    );
  }, 60_000);

  it('a FIFO as --heat-environment is refused without blocking', async () => {
    const env = fifo('env.fifo');
    await expect(readHeatEnvironments([env], tmp)).rejects.toThrow(UsageError);
    await expect(readHeatEnvironments([env], tmp)).rejects.toThrow(/env\.fifo: it is a FIFO \(named pipe\), not a regular file/);
  });

  it('real packages still pass with the default limits: the sample onboards, one with a 24 MiB incompressible image validates', async () => {
    const ok = await run(['vnfpkg-onboard', SAMPLE]);
    expect(ok.stderr).not.toMatch(/error/);
    expect(ok.code).toBe(0);
    // A package of a 24 MiB incompressible image (ratio ~1), zipped: well within every limit.
    const dir = join(tmp, 'image-pkg');
    mkdirSync(dir);
    execFileSync('cp', ['-r', `${SAMPLE}/.`, dir]);
    mkdirSync(join(dir, 'Files', 'images'), { recursive: true });
    writeFileSync(join(dir, 'Files', 'images', 'image.tar'), randomBytes(24 * 1024 * 1024));
    const zip = join(tmp, 'image-pkg.zip');
    const built = await run(['vnfpkg-build', dir, '-o', zip]);
    expect(built.code).toBe(0);
    const validated = await run(['vnfpkg-validate', zip]);
    expect(validated.code).toBe(0);
  }, 60_000);

  it('clips echoed values, and bounds any message and hint whatever it carries', () => {
    expect(clip('short')).toBe('short');
    expect(clip('x'.repeat(10_000_000))).toBe(`${'x'.repeat(200)}… (9999800 more characters)`);
    expect(echo('a"b')).toBe('"a\\"b"');
    expect(echo(undefined)).toBe('undefined');
    const e = new UsageError(`bad value ${'v'.repeat(10_000_000)}`, { hint: 'h'.repeat(10_000) });
    expect(e.message.length).toBeLessThan(2100);
    expect(e.message).toMatch(/… \(\d+ more characters\)$/);
    expect(e.hint!.length).toBeLessThan(2100);
  });

  it('reads --max-unpacked-size in binary units, however they are written', () => {
    expect(parseSize('--s', '8GiB')).toBe(8 * 1024 ** 3);
    expect(parseSize('--s', '8G')).toBe(8 * 1024 ** 3);
    expect(parseSize('--s', '500MiB')).toBe(500 * 1024 ** 2);
    expect(parseSize('--s', '1.5g')).toBe(1.5 * 1024 ** 3);
    expect(parseSize('--s', '1048576')).toBe(1048576);
    for (const bad of ['', '0', '-1G', '8 GB extra', 'GiB']) expect(() => parseSize('--s', bad)).toThrow(UsageError);
  });

  afterAll(() => {
    const refused = seen.filter((s) => s.code === 2).length;
    const crashes = seen.filter((s) => s.crashed).length;
    console.info(`hostile-inputs: ${seen.length} inputs, ${refused} refused with exit 2, ${crashes} crashes, slowest ${Math.max(...seen.map((s) => s.ms))} ms`);
  });
});

/**
 * Terminal escapes in what others wrote: a VIM's or an instance's name and
 * description (another client of the shared store, an import, an old
 * version may have written what vnf-create now refuses), the messages that
 * quote them, and what a package script printed. On their way to a person
 * (tables always, messages on stderr always, -o value and op-log on a
 * terminal) OSC 52 (clipboard), OSC 0 (title), ED (clear screen), a lone
 * carriage return and U+202E are shown escaped; -o json and yaml, and -o
 * value or op-log in a pipe, keep the exact bytes.
 */
describe('terminal escapes in names, descriptions, messages and script output', () => {
  const OSC52 = '\x1b]52;c;ZWNobyBwd25lZA==\x07';
  const OSC0 = '\x1b]0;owned\x07';
  const HOSTILE = `a${OSC52}${OSC0}\x1b[2JFAILED\rok\u202eb`;
  const SHOWN = 'a\\x1b]52;c;ZWNobyBwd25lZA==\\x07\\x1b]0;owned\\x07\\x1b[2JFAILED\\rok\\u202eb';
  /** What must never reach a screen raw: ESC (OSC and CSI alike, colour is off), CR, the C1 CSI, the bidi overrides. */
  const RAW = /[\x1b\r\u009b\u202a-\u202e\u2066-\u2069]/;
  const VIM_NAME = `edge${OSC0}\u202e`;
  const VIM_SHOWN = 'edge\\x1b]0;owned\\x07\\u202e';
  const VNF_NAME = `web${OSC52}\x1b[2J`;
  const VNF_SHOWN = 'web\\x1b]52;c;ZWNobyBwd25lZA==\\x07\\x1b[2J';
  // Prints the issue's sequences as a script would, its own file ASCII (printf's octal escapes).
  const EVIL_SH = "#!/bin/sh\nprintf 'before \\033]52;c;ZWNobyBwd25lZA==\\007 \\033]0;owned\\007 \\033[2J FAILED\\rok \\342\\200\\256 after\\n'\n";
  // The hook runner reads its output by lines, and a carriage return ends one: two lines, each shown escaped.
  const EVIL_RAW = [`before ${OSC52} ${OSC0} \x1b[2J FAILED`, 'ok \u202e after'];
  const EVIL_SHOWN = ['before \\x1b]52;c;ZWNobyBwd25lZA==\\x07 \\x1b]0;owned\\x07 \\x1b[2J FAILED', 'ok \\u202e after'];

  let sandbox: Sandbox;
  let home: string;
  let vnfId = '';

  /** main() in-process; `tty` flags the streams as a terminal's (as Node does), colour off so that every ESC is a finding. */
  async function runOn(argv: string[], tty: { stdout?: boolean; stderr?: boolean } = {}) {
    const stream = (isTTY?: boolean) => Object.assign(new PassThrough(), isTTY ? { isTTY: true, columns: 400, rows: 60 } : {});
    const out = stream(tty.stdout);
    const err = stream(tty.stderr);
    let stdout = '';
    let stderr = '';
    out.on('data', (d: Buffer) => (stdout += d.toString()));
    err.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await main(argv, { env: { VNFM_HOME: home, HOME: tmp, NO_COLOR: '1' }, cwd: tmp, streams: { stdin: new PassThrough(), stdout: out, stderr: err } });
    return { code, stdout, stderr };
  }
  const ok = async (argv: string[], tty: { stdout?: boolean; stderr?: boolean } = {}) => {
    const r = await runOn(argv, tty);
    if (r.code !== 0) throw new Error(`vnfm ${argv.join(' ')} exited ${r.code}\n${r.stderr}`);
    return r;
  };

  /** The basic CNF with an instantiate_end hook that prints escape sequences. */
  function evilPackage(): string {
    const pkg = join(tmp, 'evil-cnf');
    cpSync(SAMPLE, pkg, { recursive: true });
    mkdirSync(join(pkg, 'Scripts'));
    writeFileSync(join(pkg, 'Scripts/evil.sh'), EVIL_SH);
    const hash = createHash('sha256').update(EVIL_SH).digest('hex');
    appendFileSync(join(pkg, 'TOSCA-Metadata/TOSCA.meta'), `\nName: Scripts/evil.sh\nContent-Type: text/x-shellscript\nAlgorithm: SHA-256\nHash: ${hash}\n`);
    const df = join(
      pkg,
      'Definitions',
      readdirSync(join(pkg, 'Definitions')).find((f) => f.includes('_df_'))!,
    );
    const hook = [
      '      interfaces:',
      '        Vnflcm:',
      '          instantiate_end: {implementation: evil}',
      '      artifacts:',
      '        evil:',
      '          type: tosca.artifacts.Implementation.Bash',
      '          file: ../Scripts/evil.sh',
      '',
    ].join('\n');
    const text = readFileSync(df, 'utf8').replace(/( {4}VNF:\n {6}type: vnfm\.samples\.BasicCnf\n)/, `$1${hook}`);
    expect(text).toContain('implementation: evil');
    writeFileSync(df, text);
    return pkg;
  }

  beforeAll(async () => {
    sandbox = await startSandbox({ host: '127.0.0.1', port: 0, controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
    home = join(mkdtempSync(join(tmp, 'esc-')), 'home');
    const vimConfig = join(tmp, 'esc-vim-config.yaml');
    writeSandboxConfigs(sandbox, { vimConfigPath: vimConfig, kubeconfigPath: join(tmp, 'esc-kubeconfig') });
    await ok(['vim-register', '--config-file', vimConfig, 'edge', '--description', HOSTILE]);
    await ok(['vnfpkg-onboard', evilPackage(), '--name', 'evil-cnf']);
    vnfId = (JSON.parse((await ok(['vnf-create', '--package', 'evil-cnf', '--name', 'web', '--description', HOSTILE, '-o', 'json'])).stdout) as { id: string }).id;
    // Names vnfm refuses to write, as an older version or another writer of the shared store may leave them.
    const store = openStore(home);
    try {
      await store.db.prepare('UPDATE vims SET name = ? WHERE name = ?').run(VIM_NAME, 'edge');
      await store.db.prepare('UPDATE vnf_instances SET name = ? WHERE id = ?').run(VNF_NAME, vnfId);
    } finally {
      await store.close();
    }
  }, 60_000);

  afterAll(async () => {
    await sandbox?.close();
  });

  it('vim-list and vim-show tables show a hostile name and description escaped, in a pipe too; -o json and yaml keep them exact', async () => {
    const list = await ok(['vim-list']);
    expect(list.stdout).toContain(VIM_SHOWN);
    expect(list.stdout).not.toMatch(RAW);
    // Escaped before measured: the columns still line up.
    const [header, row] = list.stdout.split('\n');
    expect(row!.indexOf('kubernetes')).toBe(header!.indexOf('TYPE'));
    const show = await ok(['vim-show', await vimIdOf()]);
    expect(show.stdout).toMatch(new RegExp(`^name +${escapeRe(VIM_SHOWN)}$`, 'm'));
    expect(show.stdout).toMatch(new RegExp(`^description +${escapeRe(SHOWN)}$`, 'm'));
    expect(show.stdout).not.toMatch(RAW);
    const json = JSON.parse((await ok(['vim-list', '-o', 'json'])).stdout) as Array<{ name: string; description: string }>;
    expect(json[0]).toMatchObject({ name: VIM_NAME, description: HOSTILE });
    const yamlText = (await ok(['vim-show', await vimIdOf(), '-o', 'yaml'], { stdout: true })).stdout;
    expect(yaml.load(yamlText)).toMatchObject({ name: VIM_NAME, description: HOSTILE });
  });

  it('vnf-list (the table SQLite writes) and vnf-show show a hostile instance name and description escaped; -o json keeps them exact', async () => {
    for (const argv of [['vnf-list'], ['vnf-list', '-o', 'wide']]) {
      const list = await ok(argv);
      expect(list.stdout).toContain(VNF_SHOWN);
      expect(list.stdout).not.toMatch(RAW);
      const [header, row] = list.stdout.split('\n');
      expect(row!.search(/\bNOT_INSTANTIATED\b/)).toBe(header!.indexOf('STATE'));
    }
    const show = await ok(['vnf-show', vnfId]);
    expect(show.stdout).toMatch(new RegExp(`^vnfInstanceName +${escapeRe(VNF_SHOWN)}$`, 'm'));
    expect(show.stdout).toMatch(new RegExp(`^vnfInstanceDescription +${escapeRe(SHOWN)}$`, 'm'));
    expect(show.stdout).not.toMatch(RAW);
    const json = JSON.parse((await ok(['vnf-show', vnfId, '-o', 'json'], { stdout: true })).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ vnfInstanceName: VNF_NAME, vnfInstanceDescription: HOSTILE });
    expect(JSON.parse((await ok(['vnf-list', '-o', 'json'])).stdout)).toMatchObject([{ vnfInstanceName: VNF_NAME, vnfInstanceDescription: HOSTILE }]);
  });

  it('-o value, name and jsonpath are exact in a pipe, escaped on a terminal', async () => {
    const field = ['vnf-show', vnfId, '-o', 'value', '-c', 'vnfInstanceDescription'];
    expect((await ok(field)).stdout).toBe(`${HOSTILE}\n`);
    expect((await ok(field, { stdout: true })).stdout).toBe(`${SHOWN}\n`);
    const names = ['vnf-list', '-o', 'value', '-c', 'name'];
    expect((await ok(names)).stdout).toBe(`${VNF_NAME}\n`);
    expect((await ok(names, { stdout: true })).stdout).toBe(`${VNF_SHOWN}\n`);
    const path = ['vim-list', '-o', 'jsonpath={.items[0].description}'];
    expect((await ok(path)).stdout).toBe(`${HOSTILE}\n`);
    expect((await ok(path, { stdout: true })).stdout).toBe(`${SHOWN}\n`);
  });

  it('an error message quoting a hostile name is escaped, on a terminal or not', async () => {
    for (const tty of [{}, { stderr: true }]) {
      const r = await runOn(['vim-show', `ghost${OSC52}\x1b[2J\u202e`], tty);
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('error: vim "ghost\\x1b]52;c;ZWNobyBwd25lZA==\\x07\\x1b[2J\\u202e" not found');
      expect(r.stderr).not.toMatch(RAW);
    }
    // A message naming the VIM as the store holds it.
    const updated = await ok(['vim-update', await vimIdOf(), '--description', HOSTILE]);
    expect(updated.stderr).toContain(`vim "${VIM_SHOWN}" updated`);
    expect(updated.stderr).not.toMatch(RAW);
  });

  it("a package script's escapes: escaped in the live view and in op-log on a terminal, exact in op-log's pipe", async () => {
    const request = join(tmp, 'esc-instantiate.json');
    writeFileSync(request, readFileSync(resolve(SAMPLE, '../requests/instantiate.json')));
    const run = await ok(['vnf-instantiate', vnfId, '--request-file', request, '--allow-package-scripts', '--timeout', '60s'], { stderr: true });
    // The live view redraws with its own cursor codes (ESC [ n F, ESC [ J); nothing else of ESC reaches the screen.
    for (const line of EVIL_SHOWN) expect(run.stderr).toContain(`│ Scripts/evil.sh: ${line}\n`);
    expect(run.stderr.replace(/\x1b\[\d+F\x1b\[J/g, '')).not.toMatch(RAW);
    const opId = (JSON.parse((await ok(['op-list', '--vnf', vnfId, '-o', 'json'])).stdout) as Array<{ id: string }>)[0]!.id;
    const shown = await ok(['op-log', opId], { stdout: true });
    for (const line of EVIL_SHOWN) expect(shown.stdout).toContain(`[instantiate_end] Scripts/evil.sh: ${line}\n`);
    expect(shown.stdout).not.toMatch(RAW);
    const piped = await ok(['op-log', opId]);
    for (const line of EVIL_RAW) expect(piped.stdout).toContain(`[instantiate_end] Scripts/evil.sh: ${line}\n`);
  }, 60_000);

  it('a consent question naming a hostile VIM shows it escaped on the terminal (the real program on a pseudo-terminal)', async () => {
    const asked = await onTerminal(['vim-delete', await vimIdOf()], home, 'n', tmp);
    expect(asked.screen).toContain(`Delete vim "${VIM_SHOWN}" and its stored credentials?`);
    expect(asked.screen).not.toContain(OSC0);
    expect(asked.screen).not.toContain('\u202e');
    expect(asked.screen).toContain('nothing deleted');
  }, 30_000);

  let vimId = '';
  async function vimIdOf(): Promise<string> {
    if (!vimId) {
      const store = openStore(home);
      try {
        vimId = (await store.vims.get(VIM_NAME)).id;
      } finally {
        await store.close();
      }
    }
    return vimId;
  }
});

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
