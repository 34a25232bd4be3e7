/** The store on a temp database: migrations, file modes, repositories. */
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { VnfPackage } from '../../src/csar/package.js';
import { ConflictError, NotFoundError } from '../../src/errors.js';
import { migrations } from '../../src/store/migrations/index.js';
import { openStore } from '../../src/store/index.js';
import { openDatabase } from '../../src/store/database.js';

const home = () => join(mkdtempSync(join(tmpdir(), 'vnfm-store-')), 'home');

function pkg(over: Partial<VnfPackage> = {}): VnfPackage {
  return {
    id: 'p1', vnfdId: 'vnfd-1', vnfProvider: 'ACME', vnfProductName: 'cnf', vnfSoftwareVersion: '1.0', vnfdVersion: '1.0',
    onboardingState: 'ONBOARDED', operationalState: 'ENABLED', usageState: 'NOT_IN_USE', userDefinedData: { k: 'v' },
    checksum: { algorithm: 'SHA-256', hash: 'ab'.repeat(32) }, sizeBytes: 10,
    summary: { flavours: [], artifacts: [], kubernetesDefinitions: [] }, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

describe('store', () => {
  it('makes VNFM_HOME 0700 and the database 0600, in WAL mode with foreign keys and every migration applied', () => {
    const h = home();
    const store = openStore(h);
    try {
      expect(statSync(h).mode & 0o777).toBe(0o700);
      expect(statSync(join(h, 'vnfm.db')).mode & 0o777).toBe(0o600);
      expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(store.db.pragma('user_version', { simple: true })).toBe(Math.max(...migrations.map((m) => m.version)));
    } finally {
      store.close();
    }
  });

  it('applies only the migrations it has not applied, and refuses a store from a newer vnfm', () => {
    const h = home();
    openDatabase(h, { migrations: migrations.slice(0, 1) }).close();
    const db = openDatabase(h);
    expect(db.pragma('user_version', { simple: true })).toBe(migrations.length);
    db.close();
    const newer = [...migrations, { version: 999, name: 'future', sql: 'CREATE TABLE future (x)' }];
    openDatabase(h, { migrations: newer }).close();
    expect(() => openDatabase(h)).toThrow(/written by a newer vnfm/);
  });

  it('packages: found by id, vnfdId or name; vnfdId and name unique; in-use packages are not deleted', () => {
    const store = openStore(home());
    try {
      store.packages.insert(pkg({ name: 'basic' }));
      expect(store.packages.get('p1').userDefinedData).toEqual({ k: 'v' });
      expect(store.packages.get('vnfd-1').id).toBe('p1');
      expect(store.packages.get('basic').id).toBe('p1');
      expect(() => store.packages.get('nope')).toThrow(NotFoundError);
      expect(() => store.packages.insert(pkg({ id: 'p2' }))).toThrow(ConflictError);
      expect(() => store.packages.insert(pkg({ id: 'p3', vnfdId: 'vnfd-3', name: 'basic' }))).toThrow(ConflictError);
      store.packages.setStates('p1', { usageState: 'IN_USE' }, '2026-01-02T00:00:00.000Z');
      expect(() => store.packages.delete('p1')).toThrow(/in use/);
      store.packages.setStates('p1', { usageState: 'NOT_IN_USE', operationalState: 'DISABLED' }, '2026-01-03T00:00:00.000Z');
      expect(store.packages.get('p1')).toMatchObject({ operationalState: 'DISABLED', updatedAt: '2026-01-03T00:00:00.000Z' });
      store.packages.delete('p1');
      expect(store.packages.list()).toEqual([]);
    } finally {
      store.close();
    }
  });

  it('VIMs: at most one default, enforced by the schema itself', () => {
    const store = openStore(home());
    try {
      const insert = store.db.prepare(
        "INSERT INTO vims (id, name, type, is_default, auth_url, auth_method, verify_tls, status, created_at, updated_at) VALUES (?, ?, 'kubernetes', 1, 'https://h', 'bearer-token', 1, 'PENDING', 'now', 'now')",
      );
      insert.run('a', 'a');
      expect(() => insert.run('b', 'b')).toThrow(/UNIQUE/);
    } finally {
      store.close();
    }
  });
});
