/**
 * Prompts on a real terminal: `script` gives the program a pseudo-terminal,
 * and the test answers when the question appears.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, newHome, vnfm } from '../support/cli.js';

/** Runs vnfm on a pty and types `answer` once the prompt shows. */
function onTerminal(args: string[], home: string, answer: string): Promise<{ code: number | null; screen: string }> {
  return new Promise((resolve, reject) => {
    const cmd = [process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ');
    const child = spawn('script', ['-qec', cmd, '/dev/null'], {
      env: { PATH: process.env['PATH'], HOME: home, VNFM_HOME: home, TERM: 'xterm' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    let answered = false;
    child.stdout.on('data', (d: Buffer) => {
      screen += d.toString();
      if (!answered && screen.includes('(y/N)')) {
        answered = true;
        child.stdin.write(answer + '\r');
      }
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, screen }));
  });
}

describe('confirmation prompts', () => {
  it('vim-delete asks on a terminal: "n" keeps the VIM, "y" deletes it', async () => {
    const home = newHome();
    const reg = await vnfm(['vim-register', '--no-check', '--config-file', 'templates/vim-config-kubernetes.yaml', 'edge'], { home, cwd: process.cwd() });
    expect(reg.code, reg.stderr).toBe(0);

    const no = await onTerminal(['vim-delete', 'edge'], home, 'n');
    expect(no.screen).toMatch(/Delete vim "edge" and its stored credentials\?/);
    expect(no.screen).toMatch(/nothing deleted/);
    expect(no.code).toBe(0);
    expect(JSON.parse((await vnfm(['vim-list', '-o', 'json'], { home })).stdout)).toHaveLength(1);

    const yes = await onTerminal(['vim-delete', 'edge'], home, 'y');
    expect(yes.screen).toMatch(/vim "edge" deleted/);
    expect(yes.code).toBe(0);
    expect((await vnfm(['vim-list', '-o', 'json'], { home })).stdout.trim()).toBe('[]');
  });
});
