/**
 * Throw-away certificates for tests, made with the openssl binary in a temp
 * directory, so no key is ever committed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPki {
  dir: string;
  /** PEM of a self-signed CA certificate. */
  caCert: string;
  /** PEM of a self-signed client certificate and its key. */
  clientCert: string;
  clientKey: string;
  /** A key that belongs to no certificate here. */
  otherKey: string;
  cleanup(): void;
}

function selfSigned(dir: string, name: string, subject: string): void {
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.crt`), '-days', '2', '-subj', subject,
  ], { stdio: 'pipe' });
}

export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-pki-'));
  selfSigned(dir, 'ca', '/CN=vnfm test CA');
  selfSigned(dir, 'client', '/CN=vnfm-test-user/O=system:masters');
  execFileSync('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', join(dir, 'other.key')], { stdio: 'pipe' });
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return {
    dir,
    caCert: read('ca.crt'),
    clientCert: read('client.crt'),
    clientKey: read('client.key'),
    otherKey: read('other.key'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
