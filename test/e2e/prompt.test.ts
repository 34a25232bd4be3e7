/**
 * Prompts on a real terminal: `script` gives the program a pseudo-terminal,
 * and the test answers when the question appears.
 */
import { describe, expect, it } from 'vitest';
import { newHome, onTerminal, vnfm } from '../support/cli.js';


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
