/**
 * The store reads an instance's or an operation's JSON columns when the
 * property is first read, so a table of 10 000 rows parses only what it
 * shows. What callers see is unchanged: the same fields, in the same order,
 * assignable and spreadable.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LcmOpOcc, VnfInstance } from '../../src/model/lcm.js';
import { openStore } from '../../src/store/index.js';
import { packageRecord } from '../support/store-records.js';

const NOW = '2026-01-01T00:00:00.000Z';
const pkg = packageRecord();
const instance = {
  id: 'inst-1',
  vnfInstanceName: 'web',
  vnfInstanceDescription: '',
  vnfdId: 'vnfd-1',
  vnfPkgId: 'p1',
  vnfProvider: 'ACME',
  vnfProductName: 'cnf',
  vnfSoftwareVersion: '1.0',
  vnfdVersion: '1.0',
  instantiationState: 'INSTANTIATED',
  instantiatedVnfInfo: { flavourId: 'simple', vnfState: 'STARTED', vnfcInfo: [{ id: 'c1', vduId: 'VDU1' }], metadata: { namespace: 'default' } },
  metadata: { owner: 'ops' },
  createdAt: NOW,
  updatedAt: NOW,
} as unknown as VnfInstance;
const op: LcmOpOcc = {
  id: 'op-1',
  vnfInstanceId: 'inst-1',
  operation: 'INSTANTIATE',
  operationState: 'COMPLETED',
  stateEnteredTime: NOW,
  startTime: NOW,
  operationParams: { flavourId: 'simple' } as LcmOpOcc['operationParams'],
  journal: [],
  isAutomaticInvocation: false,
};

async function seeded() {
  const store = openStore(join(mkdtempSync(join(tmpdir(), 'vnfm-lazy-')), 'home'));
  await store.packages.insert(pkg);
  await store.instances.insert(instance);
  await store.opOccs.insert(op, { vnfPkgId: 'p1', vnfdId: 'vnfd-1', instantiationState: 'NOT_INSTANTIATED' } as never);
  return store;
}

describe('JSON columns read on first use', () => {
  it('a listed instance and operation print as they were written: same fields, same order', async () => {
    const store = await seeded();
    try {
      const [listed] = await store.instances.list();
      expect(JSON.stringify(listed)).toBe(JSON.stringify(instance));
      expect(Object.keys(listed!)).toEqual(Object.keys(instance));
      expect(JSON.stringify((await store.opOccs.list())[0])).toBe(JSON.stringify(op));
      expect(await store.instances.get('web')).toEqual(instance);
    } finally {
      await store.close();
    }
  });

  it('a list reads no blob it is not asked for: a damaged instance info fails only where it is read', async () => {
    const store = await seeded();
    try {
      await store.db.prepare("UPDATE vnf_instance_details SET instantiated_vnf_info = '{damaged' WHERE id = 'inst-1'").run();
      await store.db.prepare("INSERT INTO lcm_op_occ_journal_steps (op_id, seq, step) VALUES ('op-1', 0, '{damaged')").run();
      const [listed] = await store.instances.list();
      expect([listed!.id, listed!.vnfInstanceName, listed!.instantiationState, listed!.metadata]).toEqual(['inst-1', 'web', 'INSTANTIATED', { owner: 'ops' }]);
      expect(() => listed!.instantiatedVnfInfo).toThrow(SyntaxError);
      const [o] = await store.opOccs.list();
      expect([o!.operation, o!.operationState, o!.operationParams]).toEqual(['INSTANTIATE', 'COMPLETED', { flavourId: 'simple' }]);
      expect(() => o!.journal).toThrow(SyntaxError);
    } finally {
      await store.close();
    }
  });

  it('a read value is kept (parsed once), and can be replaced, deleted and spread like any property', async () => {
    const store = await seeded();
    try {
      const listed = await store.instances.get('inst-1');
      const info = listed.instantiatedVnfInfo;
      expect(listed.instantiatedVnfInfo).toBe(info);
      info!.vnfState = 'STOPPED';
      expect(listed.instantiatedVnfInfo!.vnfState).toBe('STOPPED');
      listed.metadata = { owner: 'dev' };
      expect(listed.metadata).toEqual({ owner: 'dev' });
      const copy = { ...listed, vnfInstanceName: 'web-2' };
      expect(copy.instantiatedVnfInfo).toBe(info);
      expect(copy.metadata).toEqual({ owner: 'dev' });
      delete listed.instantiatedVnfInfo;
      expect('instantiatedVnfInfo' in listed).toBe(false);
      // Written back as read: the store keeps the change.
      await store.instances.update({ ...copy, vnfInstanceName: 'web' });
      expect((await store.instances.get('inst-1')).instantiatedVnfInfo!.vnfState).toBe('STOPPED');
    } finally {
      await store.close();
    }
  });
});
