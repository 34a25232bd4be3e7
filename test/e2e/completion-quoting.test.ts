/**
 * Completion of names another client wrote into the store (a shared store
 * takes names from anyone who can write one), in real interactive bash, zsh
 * and fish on a pseudo-terminal: TAB runs the shell's own completion
 * machinery with vnfm's script loaded, Enter runs the line. The `vnfm` on
 * PATH answers completion with the real program and otherwise records the
 * arguments it was given: each must be the exact name, as one argument, and
 * nothing may have run (the names `touch` a file in the working directory).
 * Names with control characters are never offered.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import type { Vim } from '../../src/model/vim.js';
import { BIN, vnfm } from '../support/cli.js';
import { SHELL_HOSTILE_NAMES, UNPRINTABLE_NAMES } from '../support/hostile-names.js';
import { PtyShell, type Shell } from '../support/pty-shell.js';
import { instanceRecord, packageRecord } from '../support/store-records.js';

let dir: string;
let work: string;
let argsFile: string;
const scripts: Record<string, string> = {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vnfm-completion-quoting-'));
  work = join(dir, 'work');
  mkdirSync(work);
  argsFile = join(dir, 'args');
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  // Completion asks the real program; any other use records its arguments, NUL after each.
  writeFileSync(join(bin, 'vnfm'), `#!/bin/sh\nif [ "$1" = __complete ]; then exec '${process.execPath}' '${BIN}' "$@"; fi\nprintf '%s\\0' "$@" > '${argsFile}'\n`);
  chmodSync(join(bin, 'vnfm'), 0o755);
  for (const shell of ['bash', 'zsh', 'fish']) {
    const r = await vnfm(['completion', shell], { home: join(dir, 'unused'), cwd: dir });
    scripts[shell] = join(dir, `vnfm.${shell}`);
    writeFileSync(scripts[shell]!, r.stdout);
  }
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

let homes = 0;

/**
 * A store holding each name as a VIM's name and a package's vnfdId and,
 * where asked, a package's and an instance's names, written past the rules
 * (as another client or an older version could have). Ids start with 0,
 * which no name here does.
 */
async function storeWith(names: string | string[], more: { packageName?: boolean; instanceName?: boolean } = {}): Promise<string> {
  const home = join(dir, 'homes', String(++homes));
  const store = openStore(home);
  try {
    for (const name of [names].flat()) await plant(store, name, more);
  } finally {
    await store.close();
  }
  return home;
}

let records = 0;

async function plant(store: Store, name: string, more: { packageName?: boolean; instanceName?: boolean }): Promise<void> {
  const n = String(++records).padStart(12, '0');
  const at = '2026-01-01T00:00:00.000Z';
  const vim: Vim = {
    id: `00000000-0000-4000-8000-${n}`,
    name,
    description: '',
    isDefault: true,
    spec: { type: 'kubernetes', authUrl: 'https://127.0.0.1:6443', projectName: 'default', auth: { method: 'bearer-token' }, verifyTls: false },
    secretNames: [],
    status: 'REACHABLE',
    createdAt: at,
    updatedAt: at,
  };
  await store.vims.insert(vim, undefined);
  const pkg = packageRecord({ id: `00000000-0000-4000-9000-${n}`, vnfdId: name, ...(more.packageName ? { name } : {}) });
  await store.packages.insert(pkg);
  if (more.instanceName) {
    const id = `00000000-0000-4000-a000-${n}`;
    await store.instances.insert(instanceRecord({ id, vnfPkgId: pkg.id, vnfdId: pkg.vnfdId }));
    await store.db.prepare('UPDATE vnf_instances SET name = ? WHERE id = ?').run(name, id);
  }
}

/** How a user types `c` at the start of a word in `shell`, so that the shell reads it as itself. */
function typedChar(shell: Shell, c: string): string {
  if (/^[\p{L}\p{N}]$/u.test(c)) return c;
  if (shell !== 'fish') return `\\${c}`;
  // fish gives a backslash a meaning only before its own special characters.
  return `$\\*?~%#(){}[]<>^&|;"' `.includes(c) ? `\\${c}` : c;
}

interface Typed {
  /** What is typed before TAB, after `vnfm`. */
  line: string;
  /** The arguments vnfm must get once the line runs. */
  args: string[];
}

async function session(shell: Shell, run: (type: (home: string, typed: Typed) => Promise<void>) => Promise<void>): Promise<void> {
  const sh = await PtyShell.start(shell, {
    script: scripts[shell]!,
    dir: mkdtempSync(join(dir, `${shell}-`)),
    cwd: work,
    env: { PATH: `${join(dir, 'bin')}:${process.env['PATH']}`, HOME: dir, TERM: 'dumb', LANG: 'C.UTF-8' },
  });
  try {
    await run(async (home, typed) => {
      rmSync(argsFile, { force: true });
      const shown = await sh.line(`export VNFM_HOME=${home}\nvnfm ${typed.line}\t`);
      const got = existsSync(argsFile) ? readFileSync(argsFile, 'utf8').split('\0').slice(0, -1) : undefined;
      expect(got, `${shell}: vnfm ${typed.line}<TAB>, the terminal showed ${JSON.stringify(shown)}`).toEqual(typed.args);
      expect(readdirSync(work), `${shell}: vnfm ${typed.line}<TAB> ran something`).toEqual([]);
    });
  } finally {
    await sh.close();
  }
}

// A line is a completion and a run of the real program: some 30 lines a test, a few hundred ms each.
const SHELLS: Shell[] = ['bash', 'zsh', 'fish'];

describe.each(SHELLS)('completion in %s', (shell) => {
  it('inserts each name so that it reaches vnfm whole and runs nothing, after its first character is typed', async () => {
    await session(shell, async (type) => {
      for (const name of SHELL_HOSTILE_NAMES) {
        // A word starting with "-" is an option unless it follows "--".
        const dashes = name.startsWith('-') ? ['--'] : [];
        await type(await storeWith(name), { line: `vim-show ${dashes.map((d) => d + ' ').join('')}${typedChar(shell, [...name][0]!)}`, args: ['vim-show', ...dashes, name] });
      }
    });
  }, 300_000);

  it('inserts a name at the start of a word, nothing typed', async () => {
    await session(shell, async (type) => {
      // vnf-create offers vnfdIds alone: each store's one package is the one candidate.
      for (const name of SHELL_HOSTILE_NAMES.filter((n) => !n.startsWith('-'))) {
        // fish leaves a leading "~" unescaped (its home directory): such a value waits for "\~" or a quote to be typed.
        const args = shell === 'fish' && name.startsWith('~') ? ['vnf-create'] : ['vnf-create', name];
        await type(await storeWith(name), { line: 'vnf-create ', args });
      }
      if (shell === 'fish') await type(await storeWith('~root'), { line: 'vnf-create \\~', args: ['vnf-create', '~root'] });
    });
  }, 300_000);

  it('completes inside the quote the word was begun with', async () => {
    const quotes = shell === 'bash' ? ["'", '"', "$'"] : ["'", '"'];
    await session(shell, async (type) => {
      for (const name of ['zz$(touch PWNED)', "it's `touch PWNED`", 'say "hi" !x']) {
        for (const q of quotes) await type(await storeWith(name), { line: `vim-show ${q}${name[0]}`, args: ['vim-show', name] });
      }
    });
  });

  it('completes package and instance names alike, and a value after --flag=', async () => {
    await session(shell, async (type) => {
      const home = await storeWith('zz$(touch PWNED)', { packageName: true, instanceName: true });
      await type(home, { line: 'vnfpkg-show z', args: ['vnfpkg-show', 'zz$(touch PWNED)'] });
      await type(home, { line: 'vnf-show z', args: ['vnf-show', 'zz$(touch PWNED)'] });
      await type(home, { line: 'vnf-list --vim=z', args: ['vnf-list', '--vim=zz$(touch PWNED)'] });
      await type(home, { line: 'vnf-list --output=j', args: ['vnf-list', '--output=json'] });
    });
  });

  it('never offers a name with a control character, a bidi override or a separator', async () => {
    await session(shell, async (type) => {
      // Were one of them offered, "zz" would grow into it (or into what they share).
      const home = await storeWith(UNPRINTABLE_NAMES, { packageName: true, instanceName: true });
      for (const command of ['vim-show', 'vnfpkg-show', 'vnf-show', 'vnf-create']) await type(home, { line: `${command} zz`, args: [command, 'zz'] });
    });
  });
});

describe('__complete', () => {
  it('leaves out values with control characters, and shows them as "?" in descriptions', async () => {
    const home = await storeWith(UNPRINTABLE_NAMES, { packageName: true, instanceName: true });
    for (const [args, count] of [
      [['vim-show', ''], UNPRINTABLE_NAMES.length],
      [['vnfpkg-show', ''], UNPRINTABLE_NAMES.length],
      [['vnf-show', ''], UNPRINTABLE_NAMES.length],
      [['vnf-create', ''], 0],
    ] as const) {
      const r = await vnfm(['__complete', '--', ...args], { home, cwd: dir });
      expect(r.code).toBe(0);
      const values = r.stdout
        .split('\n')
        .slice(1)
        .filter((l) => l !== '');
      // The ids alone, each on its own line; each one's description names its record, controls shown as "?".
      expect(
        values.map((l) => l.split('\t')[0]!).filter((v) => /^0{8}-[-0-9a-f]{27}$/.test(v)),
        r.stdout,
      ).toHaveLength(count);
      expect(values, r.stdout).toHaveLength(count);
      expect(
        values.every((l) => !/[\p{Cc}\p{Bidi_Control}\u2028\u2029]/u.test(l.replace('\t', ' '))),
        JSON.stringify(r.stdout),
      ).toBe(true);
    }
    expect((await vnfm(['__complete', '--', 'vim-show', ''], { home, cwd: dir })).stdout).toContain('\tVIM zz?]52;c;cHduZWQ=?\n');
  });
});
