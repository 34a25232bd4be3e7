/** The main job: `vnfm demo` runs the basic CNF through its whole life on an in-process sandbox. */
import { describe, expect, it } from 'vitest';
import { newHome, vnfm } from '../support/cli.js';

describe('vnfm demo', () => {
  it('onboards, creates, instantiates, scales out, heals, scales in, changes package, terminates and deletes', async () => {
    const home = newHome();
    const r = await vnfm(['demo', '-o', 'json'], { home });
    expect(r.code, r.stderr).toBe(0);
    const steps = JSON.parse(r.stdout) as { step: string; result: string }[];
    expect(steps.map((s) => s.step.replace(/ \(.*\)$/, ''))).toEqual([
      'onboard the packages',
      'create the VNF instance',
      'instantiate',
      'scale out vdu1_aspect',
      'heal one VNFC',
      'scale in vdu1_aspect',
      'change to package v2',
      'terminate',
      'delete the VNF instance',
    ]);
    expect(steps.map((s) => s.result)).toEqual([
      expect.stringMatching(/^vnfdIds /),
      expect.stringMatching(/NOT_INSTANTIATED/),
      'INSTANTIATE COMPLETED, 2 VNFCs',
      'SCALE COMPLETED, 3 VNFCs',
      'HEAL COMPLETED, 3 VNFCs',
      'SCALE COMPLETED, 2 VNFCs',
      'CHANGE_VNFPKG COMPLETED, 2 VNFCs',
      'TERMINATE COMPLETED',
      expect.stringMatching(/deleted$/),
    ]);
    // The demo works in a temporary VNFM_HOME: the user's own store is untouched.
    expect((await vnfm(['vnf-list', '-o', 'json'], { home })).stdout.trim()).toBe('[]');
    expect((await vnfm(['vim-list', '-o', 'json'], { home })).stdout.trim()).toBe('[]');
  });
});
