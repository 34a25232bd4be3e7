/**
 * Shell completion in the real shells: the scripts of `vnfm completion
 * bash|zsh|fish` are loaded into bash, zsh and fish, and the candidates they
 * offer for a command line are read back — commands, options, the choices of
 * an option, and values from the store (VIMs, packages, instances,
 * occurrences, the aspects and VNFCs of the instance on the line); files only
 * where a file is asked for.
 *
 * bash and fish run their own completion machinery (bash calls the function
 * `complete -F` names with COMP_LINE/COMP_WORDS set as bash sets them; fish
 * answers `complete -C LINE`). zsh's completion system needs a terminal, so
 * its builtins the script calls (_describe, _files, compset) are replaced by
 * ones that print what they were given.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, writeSandboxConfigs, type Sandbox } from '../../src/sandbox/index.js';
import { BIN, newHome, vnfm } from '../support/cli.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');

let sandbox: Sandbox;
let dir: string;
let home: string;
let env: Record<string, string>;
const scripts: Record<string, string> = {};
let ids: { web: string; db: string; pkg: string; op: string; vnfcs: string[] };

async function ok(args: string[]) {
  const r = await vnfm(args, { home, cwd: dir });
  expect(r.code, `vnfm ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vnfm-completion-'));
  home = newHome();
  sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
  writeSandboxConfigs(sandbox, { vimConfigPath: join(dir, 'vim.yaml'), kubeconfigPath: join(dir, 'kubeconfig') });
  // `vnfm` on PATH, as an installed one is.
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'vnfm'), `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`);
  chmodSync(join(bin, 'vnfm'), 0o755);
  env = { PATH: `${bin}:${process.env['PATH']}`, HOME: dir, VNFM_HOME: home, TERM: 'dumb' };
  for (const shell of ['bash', 'zsh', 'fish']) {
    scripts[shell] = join(dir, `vnfm.${shell}`);
    writeFileSync(scripts[shell]!, await ok(['completion', shell]));
  }
  await ok(['vim-register', '--config-file', join(dir, 'vim.yaml'), '--is-default', 'edge']);
  await ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'basic-cnf']);
  const web = JSON.parse(await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'web', '-o', 'json'])) as { id: string; vnfPkgId: string };
  const db = JSON.parse(await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'db', '-o', 'json'])) as { id: string };
  const op = JSON.parse(await ok(['vnf-instantiate', 'web', join(SAMPLE, 'requests/instantiate.json'), '-o', 'json'])) as { id: string };
  const shown = JSON.parse(await ok(['vnf-show', 'web', '-o', 'json'])) as { instantiatedVnfInfo: { vnfcInfo: { id: string }[] } };
  ids = { web: web.id, db: db.id, pkg: web.vnfPkgId, op: op.id, vnfcs: shown.instantiatedVnfInfo.vnfcInfo.map((v) => v.id).sort() };
  // Files in the working directory: offered only where a file is asked for.
  writeFileSync(join(dir, 'request.json'), '{}');
  writeFileSync(join(dir, 'webnotes.txt'), '');
}, 120_000);

afterAll(async () => {
  await sandbox?.close();
});

/**
 * What bash offers for `line` (the cursor at its end): the completion function called as bash calls it, COMP_WORDS split
 * at blanks and "=" as bash splits them, and the word readline replaces (after the last blank, "=" or ":") as its $2.
 * test/e2e/completion-quoting.test.ts drives readline itself.
 */
function bash(line: string): string[] {
  const program = `
source "$1"
COMP_LINE="$2"; COMP_POINT=\${#COMP_LINE}
read -ra COMP_WORDS <<< "\${COMP_LINE//=/ = }"
[[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 ))
_vnfm vnfm "\${COMP_LINE##*[[:space:]=:]}" "\${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\\n' "\${COMPREPLY[@]}"
`;
  return lines(execFileSync('bash', ['--norc', '--noprofile', '-c', program, 'bash', scripts['bash']!, line], { cwd: dir, env, encoding: 'utf8' }));
}

/** What the zsh script hands to _describe (value:description, backslashes and colons in the value escaped) and _files, for `line`. */
function zsh(line: string): string[] {
  const program = `
_describe() { local name=\${@[-1]}; print -rl -- "\${(@P)name}" }
_files() { print -r -- "<files\${1:+ $1}>" }
compdef() { : }
compset() { [[ $1 == -P && $PREFIX == *=* ]] && PREFIX=\${PREFIX#*=}; return 0 }
source "$1"
words=( \${(z)2} )
[[ $2 == *" " ]] && words+=("")
CURRENT=\${#words}
PREFIX=\${words[-1]}
_vnfm
`;
  return lines(execFileSync('zsh', ['-f', '-c', program, 'zsh', scripts['zsh']!, line], { cwd: dir, env, encoding: 'utf8' })).map((l) =>
    l.startsWith('<') ? l : /^(?:\\.|[^\\:])*/.exec(l)![0].replace(/\\(.)/g, '$1'),
  );
}

/** What fish offers for `line` (`complete -C`), values only. */
function fish(line: string): string[] {
  const program = 'source $argv[1]; complete -C $argv[2]';
  return lines(execFileSync('fish', ['--no-config', '-c', program, scripts['fish']!, line], { cwd: dir, env, encoding: 'utf8' })).map((l) => l.split('\t')[0]!);
}

const lines = (text: string) => text.split('\n').filter((l) => l !== '');

describe('shell completion', () => {
  it('commands and options', () => {
    for (const offer of [bash, zsh, fish]) {
      expect(offer('vnfm vnf-sc'), offer.name).toEqual(['vnf-scale']);
      expect(offer('vnfm op-re'), offer.name).toEqual(expect.arrayContaining(['op-retry']));
      expect(offer('vnfm op-re'), offer.name).not.toContain('op-list');
      expect(offer('vnfm vnf-list --st'), offer.name).toEqual(['--state']);
      expect(offer('vnfm vnf-scale web --'), offer.name).toEqual(expect.arrayContaining(['--type', '--aspect-id', '--number-of-steps', '--timeout', '--help']));
      expect(offer('vnfm __com'), offer.name).toEqual([]);
    }
  });

  it("an option's choices, and values from the store", () => {
    const vnfs = ['web', 'db', ids.web, ids.db].sort();
    for (const offer of [bash, zsh, fish]) {
      const name = offer.name;
      expect(offer('vnfm vnf-scale web --type ').sort(), name).toEqual(['SCALE_IN', 'SCALE_OUT']);
      expect(offer('vnfm vnf-list --state N'), name).toEqual(['NOT_INSTANTIATED']);
      expect(offer('vnfm vnf-show ').sort(), name).toEqual(vnfs);
      expect(offer('vnfm vnf-delete web ').sort(), name).toEqual(vnfs);
      expect(offer('vnfm vnf-show w'), name).toEqual(['web']);
      expect(offer('vnfm vnf-list --vim '), name).toEqual(expect.arrayContaining(['edge']));
      // 'g' is no hex digit, so no VIM id can also match.
      expect(offer('vnfm vim-show edg'), name).toEqual(['edge']);
      expect(offer('vnfm vnfpkg-show ').sort(), name).toEqual(['basic-cnf', ids.pkg].sort());
      expect(offer('vnfm op-show '), name).toEqual([ids.op]);
      expect(offer(`vnfm op-retry ${ids.op.slice(0, 4)}`), name).toEqual([ids.op]);
      // The aspects and VNFCs of the instance named on the line.
      expect(offer('vnfm vnf-scale web --type SCALE_OUT --aspect-id ').sort(), name).toEqual(['vdu1_aspect', 'vdu2_aspect']);
      expect(offer('vnfm vnf-scale db --aspect-id '), name).toEqual([]);
      expect(offer('vnfm vnf-heal web --vnfc-instance ').sort(), name).toEqual(ids.vnfcs);
      expect(offer(`vnfm vnf-heal web --vnfc-instance ${ids.vnfcs[0]} `).sort(), name).toEqual(ids.vnfcs);
      expect(offer('vnfm vnf-logs web --vnfc ').sort(), name).toEqual(ids.vnfcs);
      expect(offer('vnfm vnf-lo'), name).toEqual(['vnf-logs']);
    }
    expect(ids.vnfcs.length).toBeGreaterThanOrEqual(2);
  });

  it('--flag=value', () => {
    expect(bash('vnfm vnf-list --output=j')).toEqual(['json']);
    // What goes after the "=": readline keeps it (test/e2e/completion-quoting.test.ts types it).
    expect(bash('vnfm vnf-list --output=')).toEqual(expect.arrayContaining(['table', 'json', 'yaml']));
    expect(zsh('vnfm vnf-list --output=y')).toEqual(['yaml']);
    expect(fish('vnfm vnf-list --output=y')).toEqual(['--output=yaml']);
  });

  it('files only where a file is asked for', () => {
    expect(bash('vnfm vnf-instantiate db ')).toEqual(expect.arrayContaining(['request.json', 'webnotes.txt']));
    expect(bash('vnfm vnf-instantiate db --request-file re')).toEqual(['request.json']);
    expect(bash('vnfm vim-register --config-file vi')).toEqual(['vim.yaml']);
    expect(zsh('vnfm vnf-instantiate db ')).toEqual(['<files>']);
    expect(zsh('vnfm vnfpkg-build ')).toEqual(['<files -/>']);
    expect(fish('vnfm vnf-instantiate db --request-file re')).toEqual(['request.json']);
    for (const offer of [bash, zsh, fish]) {
      // An instance, not a file, however the files in the directory are named.
      expect(offer('vnfm vnf-show we'), offer.name).toEqual(['web']);
      expect(offer('vnfm vnf-scale web --number-of-steps '), offer.name).toEqual([]);
    }
  });

  it('a VNFM_HOME without a store offers no values and creates nothing', () => {
    const empty = join(dir, 'no-store');
    const r = execFileSync('bash', ['-c', 'vnfm __complete -- vnf-show ""'], { cwd: dir, env: { ...env, VNFM_HOME: empty }, encoding: 'utf8' });
    expect(r).toBe(':none\n');
    expect(() => execFileSync('test', ['-e', empty])).toThrow();
  });
});
