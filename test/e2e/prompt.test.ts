/**
 * Prompts on a real terminal: `script` gives the program a pseudo-terminal,
 * and the test answers when the question appears.
 */
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
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

describe('op-fail --force', () => {
  it('asks on a terminal, naming the lock holder: "n" changes nothing, "y" fails the occurrence and frees the instance', async () => {
    const home = newHome();
    const onboard = await vnfm(['vnfpkg-onboard', 'csar-samples/basic-cnf/package', '--name', 'basic-cnf'], { home, cwd: process.cwd() });
    expect(onboard.code, onboard.stderr).toBe(0);
    const vnf = JSON.parse((await vnfm(['vnf-create', '--package', 'basic-cnf', '--name', 'web', '-o', 'json'], { home })).stdout) as {
      id: string;
      vnfPkgId: string;
      vnfdId: string;
    };
    // What a vnfm on another host leaves behind when it dies mid-instantiate: a PROCESSING occurrence under its lock.
    const opId = 'f00dfeed-0000-4000-8000-000000000001';
    const store = openStore(home);
    try {
      const since = '2026-03-01T10:00:00.000Z';
      await store.opOccs.insert(
        {
          id: opId,
          vnfInstanceId: vnf.id,
          operation: 'INSTANTIATE',
          operationState: 'PROCESSING',
          stateEnteredTime: since,
          startTime: since,
          operationParams: {},
          journal: [],
          isAutomaticInvocation: false,
          pid: 4242,
        },
        { vnfPkgId: vnf.vnfPkgId, vnfdId: vnf.vnfdId, instantiationState: 'NOT_INSTANTIATED' },
      );
      await store.opOccs.takeLock({ vnfInstanceId: vnf.id, opId, pid: 4242, acquiredAt: since, hostName: 'far-away', hostId: 'another-machine', bootId: 'b', startTime: '1' });
    } finally {
      await store.close();
    }

    const no = await onTerminal(['op-fail', '--force', opId], home, 'n');
    const flat = no.screen.replace(/\r?\n/g, '');
    expect(flat).toMatch(
      /vnf instance \S+ is locked by vnfm pid 4242 on host far-away since 2026-03-01T10:00:00.000Z \(operation INSTANTIATE, occurrence f00dfeed-\S+\), on another host \(or container\), which this host cannot check/,
    );
    expect(no.screen).toMatch(/Is that vnfm gone\? Mark the occurrence FAILED and release the lock\?/);
    expect(no.screen).toMatch(/nothing changed/);
    expect(no.code).toBe(0);
    expect(JSON.parse((await vnfm(['op-show', opId, '-o', 'json'], { home })).stdout)).toMatchObject({ operationState: 'PROCESSING' });

    const yes = await onTerminal(['op-fail', '--force', opId], home, 'y');
    expect(yes.screen).toMatch(/INSTANTIATE occurrence f00dfeed-\S+ FAILED; vnf instance \S+ released/);
    expect(yes.code).toBe(0);
    expect(JSON.parse((await vnfm(['op-show', opId, '-o', 'json'], { home })).stdout)).toMatchObject({ operationState: 'FAILED', error: { title: 'Failed by the operator' } });
    expect((await vnfm(['vnf-delete', '--yes', 'web'], { home })).code).toBe(0);
  });
});

describe('Ctrl-C at a question', () => {
  it('vim-delete and vnf-delete: exit 130, "cancelled, nothing changed", and nothing is', async () => {
    const home = newHome();
    expect((await vnfm(['vim-register', '--no-check', '--config-file', 'templates/vim-config-kubernetes.yaml', 'edge'], { home, cwd: process.cwd() })).code).toBe(0);
    const del = await onTerminal(['vim-delete', 'edge'], home, '\x03');
    expect(del.screen).toMatch(/Delete vim "edge" and its stored credentials\?/);
    expect(del.screen).toMatch(/cancelled, nothing changed/);
    expect(del.screen).not.toMatch(/unexpected failure|report it/);
    expect(del.code).toBe(130);
    expect(JSON.parse((await vnfm(['vim-list', '-o', 'json'], { home })).stdout)).toHaveLength(1);

    // A question asked before an operation is recorded: no occurrence either.
    expect((await vnfm(['vnfpkg-onboard', 'csar-samples/basic-cnf/package', '--name', 'basic-cnf'], { home, cwd: process.cwd() })).code).toBe(0);
    expect((await vnfm(['vnf-create', '--package', 'basic-cnf', '--name', 'web'], { home })).code).toBe(0);
    const del2 = await onTerminal(['vnf-delete', 'web'], home, '\x03');
    expect(del2.code).toBe(130);
    expect(del2.screen).toMatch(/cancelled, nothing changed/);
    expect(JSON.parse((await vnfm(['vnf-list', '-o', 'json'], { home })).stdout)).toHaveLength(1);
    expect(JSON.parse((await vnfm(['op-list', '-o', 'json'], { home })).stdout)).toEqual([]);
  });
});
