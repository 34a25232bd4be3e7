import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

import { BIN, newHome } from '../support/cli.js';

/**
 * Runs `vnfm ARGS` with its stdout closed by the reader before vnfm writes
 * (as `| head -1` does once it has its line): the exit code and stderr of
 * vnfm alone.
 */
function withClosedStdout(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env['PATH'], VNFM_HOME: newHome() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stderr }));
  });
}

describe('output to a reader that stops early', () => {
  it.each([[['--help']], [['sample-list', '-o', 'json']], [['vnf-list', '-o', 'json']]])('vnfm %j ends quietly with its own exit code', async (args) => {
    const { code, stderr } = await withClosedStdout(args);
    expect(stderr).not.toMatch(/EPIPE|Error|at /);
    expect(code).toBe(0);
  });
});
