/**
 * The sandbox's kept identity: when a server certificate is issued again,
 * what a state directory holds after the first and later starts, and which
 * state directories are refused.
 */
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SandboxError } from '../src/errors.js';
import { generateSandboxCa, issueServerCert, loadSandboxIdentity, SANDBOX_STATE_FILES as F, serverCertRenewalReason } from '../src/index.js';

const DAY = 24 * 60 * 60 * 1000;
const T0 = new Date('2030-03-01T12:00:00Z');
const at = (days: number): Date => new Date(T0.getTime() + days * DAY);

const temps: string[] = [];
function stateDir(): string {
  const dir = fs.mkdtempSync(join(tmpdir(), 'vnfm-sandbox-state-'));
  temps.push(dir);
  return join(dir, 'sandbox');
}
afterAll(() => temps.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

const mode = (file: string): number => fs.statSync(file).mode & 0o777;
const read = (dir: string, name: string): string => fs.readFileSync(join(dir, name), 'utf8');

function caughtError(fn: () => unknown): SandboxError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SandboxError);
    return err as SandboxError;
  }
  throw new Error('expected an error');
}

describe('serverCertRenewalReason', () => {
  const ca = generateSandboxCa({ now: T0 });
  const server = issueServerCert(ca, { hosts: ['127.0.0.2'], now: T0, validityDays: 365 });

  it.each([
    { what: 'a fresh certificate for its hosts', hosts: ['127.0.0.2'], now: at(1), reason: undefined },
    { what: 'the hosts every certificate names', hosts: ['127.0.0.1', '::1', 'localhost'], now: at(1), reason: undefined },
    { what: 'a wildcard listen address', hosts: ['0.0.0.0'], now: at(1), reason: undefined },
    { what: '31 days before expiry', hosts: ['127.0.0.2'], now: at(365 - 31), reason: undefined },
    { what: 'a listen host it does not name', hosts: ['127.0.0.3'], now: at(1), reason: 'it does not name 127.0.0.3' },
    { what: 'a host name it does not name', hosts: ['sandbox.local'], now: at(1), reason: 'it does not name sandbox.local' },
    { what: '29 days before expiry', hosts: ['127.0.0.2'], now: at(365 - 29), reason: /^it expires within 30 days/ },
    { what: 'after expiry', hosts: ['127.0.0.2'], now: at(400), reason: /^it expires within 30 days/ },
    { what: 'before it is valid', hosts: ['127.0.0.2'], now: at(-1), reason: 'it is not valid yet' },
  ])('$what: $reason', ({ hosts, now, reason }) => {
    const got = serverCertRenewalReason(server, ca.caPem, hosts, now);
    if (reason instanceof RegExp) expect(got).toMatch(reason);
    else expect(got).toBe(reason);
  });

  it('renews a certificate another CA issued, one whose key is not its own, and one that does not parse', () => {
    const otherCa = generateSandboxCa({ now: T0 });
    const foreign = issueServerCert(otherCa, { now: T0 });
    expect(serverCertRenewalReason(foreign, ca.caPem, [], at(1))).toBe('the CA did not issue it');
    expect(serverCertRenewalReason({ certPem: server.certPem, keyPem: foreign.keyPem }, ca.caPem, [], at(1))).toBe('its key does not match it');
    expect(serverCertRenewalReason({ certPem: 'garbage', keyPem: server.keyPem }, ca.caPem, [], at(1))).toBe('it cannot be read');
  });

  it('never lets a server certificate outlive its CA', () => {
    const shortCa = generateSandboxCa({ now: T0, validityDays: 100 });
    const leaf = new X509Certificate(issueServerCert(shortCa, { now: T0, validityDays: 365 }).certPem);
    expect(Date.parse(leaf.validTo)).toBe(Date.parse(new X509Certificate(shortCa.caPem).validTo));
  });
});

describe('loadSandboxIdentity', () => {
  it('writes everything on the first start (0700 directory, 0600 files) and reuses it on the next', () => {
    const dir = stateDir();
    const first = loadSandboxIdentity({ stateDir: dir, hosts: ['127.0.0.1'], now: T0 });
    expect(first.written.sort()).toEqual([F.caCert, F.caKey, F.serverCert, F.serverKey, F.token].sort());
    expect(mode(dir)).toBe(0o700);
    for (const name of Object.values(F)) expect(mode(join(dir, name)), name).toBe(0o600);
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect(read(dir, F.token).trim()).toBe(first.token);
    expect(read(dir, F.caCert)).toBe(first.caPem);
    expect(new X509Certificate(first.certPem).checkIssued(new X509Certificate(first.caPem))).toBe(true);

    const second = loadSandboxIdentity({ stateDir: dir, hosts: ['127.0.0.1'], now: at(10) });
    expect(second.written).toEqual([]);
    expect(second.serverCertRenewed).toBeUndefined();
    expect(second).toMatchObject({ caPem: first.caPem, caKeyPem: first.caKeyPem, certPem: first.certPem, keyPem: first.keyPem, token: first.token });
  });

  it('issues the server certificate again, from the same CA, for a new listen host or near expiry', () => {
    const dir = stateDir();
    const first = loadSandboxIdentity({ stateDir: dir, hosts: ['127.0.0.1'], now: T0 });

    const moved = loadSandboxIdentity({ stateDir: dir, hosts: ['127.0.0.5'], now: at(1) });
    expect(moved.serverCertRenewed).toBe('it does not name 127.0.0.5');
    expect(moved.written.sort()).toEqual([F.serverCert, F.serverKey]);
    expect(moved).toMatchObject({ caPem: first.caPem, token: first.token });
    expect(moved.certPem).not.toBe(first.certPem);
    const leaf = new X509Certificate(moved.certPem);
    expect(leaf.checkIP('127.0.0.5')).toBe('127.0.0.5');
    expect(leaf.verify(new X509Certificate(first.caPem).publicKey)).toBe(true);

    const late = loadSandboxIdentity({ stateDir: dir, hosts: ['127.0.0.5'], now: at(340) });
    expect(late.serverCertRenewed).toMatch(/^it expires within 30 days/);
    expect(late).toMatchObject({ caPem: first.caPem, token: first.token });
    expect(Date.parse(new X509Certificate(late.certPem).validTo)).toBeGreaterThan(at(700).getTime());
    expect(read(dir, F.serverCert)).toBe(late.certPem);
  });

  it.each([F.caKey, F.serverKey, F.token])('refuses a %s readable by others', (name) => {
    const dir = stateDir();
    loadSandboxIdentity({ stateDir: dir, hosts: [] });
    fs.chmodSync(join(dir, name), 0o640);
    const err = caughtError(() => loadSandboxIdentity({ stateDir: dir, hosts: [] }));
    expect(err.message).toBe(`the sandbox state file ${join(dir, name)} is accessible to other users (mode 0640)`);
    expect(err.hint).toMatch(new RegExp(`^chmod 600 ${join(dir, name)}`));
  });

  it('refuses a state directory owned by another user', () => {
    const dir = stateDir();
    loadSandboxIdentity({ stateDir: dir, hosts: [] });
    const owner = fs.statSync(dir).uid + 1;
    const err = caughtError(() => loadSandboxIdentity({ stateDir: dir, hosts: [], owner }));
    expect(err.message).toMatch(new RegExp(`^the sandbox state directory ${dir} is owned by uid \\d+, not by the current user \\(uid ${owner}\\)$`));
    expect(err.hint).toMatch(/chown -R/);
  });

  it('refuses a token that is not a bearer token and a CA whose key is not its own, naming the fix', () => {
    const dir = stateDir();
    loadSandboxIdentity({ stateDir: dir, hosts: [] });
    fs.writeFileSync(join(dir, F.token), 'two words\n');
    const bad = caughtError(() => loadSandboxIdentity({ stateDir: dir, hosts: [] }));
    expect(bad.message).toMatch(/token in .* is not a bearer token/);
    expect(bad.hint).toMatch(new RegExp(`^remove ${dir} to give the sandbox a new identity`));

    const other = stateDir();
    loadSandboxIdentity({ stateDir: other, hosts: [] });
    fs.copyFileSync(join(other, F.caKey), join(dir, F.caKey));
    fs.writeFileSync(join(dir, F.token), 'good-token\n');
    const err = caughtError(() => loadSandboxIdentity({ stateDir: dir, hosts: [] }));
    expect(err.message).toMatch(/sandbox CA in .*ca\.crt cannot be used: ca\.key is not its key/);
  });

  it('makes a new CA when only half of it is there, keeping the token', () => {
    const dir = stateDir();
    const first = loadSandboxIdentity({ stateDir: dir, hosts: [] });
    fs.rmSync(join(dir, F.caCert));
    const again = loadSandboxIdentity({ stateDir: dir, hosts: [] });
    expect(again.caPem).not.toBe(first.caPem);
    expect(again.token).toBe(first.token);
    expect(again.written.sort()).toEqual([F.caCert, F.caKey, F.serverCert, F.serverKey].sort());
    expect(new X509Certificate(again.certPem).checkIssued(new X509Certificate(again.caPem))).toBe(true);
  });
});
