/**
 * The command layer in-process, with in-memory streams in terminal and
 * non-terminal mode.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

function stream(tty: boolean) {
  const s = new PassThrough() as PassThrough & { isTTY?: boolean };
  if (tty) s.isTTY = true;
  let text = '';
  s.on('data', (d: Buffer) => (text += d.toString()));
  return { s, text: () => text };
}

async function run(argv: string[], opts: { tty?: boolean; env?: Record<string, string> } = {}) {
  const home = join(mkdtempSync(join(tmpdir(), 'vnfm-cli-')), 'home');
  const stdin = stream(Boolean(opts.tty));
  const stdout = stream(Boolean(opts.tty));
  const stderr = stream(Boolean(opts.tty));
  const code = await main(argv, { env: { VNFM_HOME: home, ...opts.env }, cwd: home, streams: { stdin: stdin.s, stdout: stdout.s, stderr: stderr.s } });
  return { code, stdout: stdout.text(), stderr: stderr.text(), home };
}

const ESC = '\u001b[';

describe('command line conventions', () => {
  it('an empty list is [] in JSON and a hint on stderr in a table', async () => {
    expect(await run(['vim-list', '-o', 'json'])).toMatchObject({ code: 0, stdout: '[]\n' });
    expect(await run(['vim-list', '-o', 'yaml'])).toMatchObject({ code: 0, stdout: '[]\n' });
    const table = await run(['vim-list']);
    expect(table.stdout).toBe('');
    expect(table.stderr).toMatch(/No VIMs registered/);
  });

  it('colours errors on a terminal only, and never with NO_COLOR or --no-color', async () => {
    expect((await run(['vim-show', 'x'], { tty: true })).stderr).toContain(ESC);
    expect((await run(['vim-show', 'x'])).stderr).not.toContain(ESC);
    expect((await run(['vim-show', 'x'], { tty: true, env: { NO_COLOR: '1' } })).stderr).not.toContain(ESC);
    expect((await run(['vim-show', 'x', '--no-color'], { tty: true })).stderr).not.toContain(ESC);
  });

  it('maps errors to documented exit codes with a hint', async () => {
    const notFound = await run(['vim-show', 'ghost']);
    expect(notFound.code).toBe(3);
    expect(notFound.stderr).toBe('error: vim "ghost" not found\nhint: list the registered VIMs with: vnfm vim-list\n');
    expect((await run(['vim-list', '-o', 'xml'])).code).toBe(2);
    expect((await run(['no-such-command'])).code).toBe(2);
    expect((await run(['vim-list', '-c', 'colour'])).code).toBe(2);
    const del = await run(['vim-delete']);
    expect(del.code).toBe(2);
  });

  it('prints --version and help with examples on stdout, exit 0', async () => {
    const v = await run(['--version']);
    expect(v).toMatchObject({ code: 0 });
    // From the sources the commit is unknown; the bundle carries it (test/e2e/single-executable.test.ts, package-install.test.ts).
    expect(v.stdout).toMatch(/^\d+\.\d+\.\d+ \(commit unknown\)\n$/);
    const help = await run(['vim-register', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Examples:\n  # register a Kubernetes cluster[^\n]*\n  \$ vnfm vim-register --config-file/);
  });

  it('every command has a description and examples', async () => {
    const top = await run(['--help']);
    const names = [...top.stdout.matchAll(/^  ([a-z][a-z-]+)(?: \[options\]| <|\s)/gm)].map((m) => m[1]!).filter((n) => n !== 'help');
    expect(names).toEqual(expect.arrayContaining(['vim-register', 'vim-list', 'vim-show', 'vim-update', 'vim-delete', 'key-rotate', 'sandbox', 'completion']));
    for (const name of names) {
      const help = await run([name, '--help']);
      expect(help.stdout, name).toMatch(/Examples:\n  # .+\n  \$ .*vnfm /);
    }
  });

  it('completion scripts ask vnfm __complete, which knows every command and opens no store that is not there', async () => {
    for (const shell of ['bash', 'zsh', 'fish']) {
      const r = await run(['completion', shell]);
      expect(r.code, shell).toBe(0);
      // bash hands over the line as typed, for vnfm to quote what it offers; zsh and fish the words, and quote themselves.
      expect(r.stdout, shell).toContain(shell === 'bash' ? 'vnfm __complete --line=' : 'vnfm __complete -- ');
    }
    expect((await run(['completion', 'bash'])).stdout).toMatch(/complete -F _vnfm vnfm/);
    expect((await run(['completion', 'zsh'])).stdout).toMatch(/^#compdef vnfm/);
    expect((await run(['completion', 'fish'])).stdout).toMatch(/complete -c vnfm -f -a '\(__vnfm_complete\)'/);
    expect((await run(['completion', 'tcsh'])).code).toBe(2);
    const top = await run(['__complete', '--', '']);
    expect(top.code).toBe(0);
    const lines = top.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(':none');
    const names = lines.slice(1).map((l) => l.split('\t')[0]);
    expect(names).toEqual(expect.arrayContaining(['vim-register', 'vnf-scale', 'op-retry', 'completion']));
    expect(names).not.toContain('__complete');
    expect(top.stdout).toMatch(/^vnf-scale\tScale a VNF instance/m);
    const { existsSync } = await import('node:fs');
    expect(existsSync(top.home)).toBe(false);
    expect((await run(['--help'])).stdout).not.toContain('__complete');
  });

  it('--help and --version open no store', async () => {
    const r = await run(['vim-list', '--help']);
    const { existsSync } = await import('node:fs');
    expect(existsSync(r.home)).toBe(false);
  });
});
