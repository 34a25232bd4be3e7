/**
 * Throw-away certificates for tests, made with the openssl binary in a temp
 * directory, so no key is ever committed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      join(dir, `${name}.key`),
      '-out',
      join(dir, `${name}.crt`),
      '-days',
      '2',
      '-subj',
      subject,
    ],
    { stdio: 'pipe' },
  );
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

/** Files of a CA and a serving certificate it signed (all PEM). */
export interface ServingPki {
  caCertPath: string;
  caKeyPath: string;
  certPath: string;
  keyPath: string;
  caCert: string;
}

/**
 * Makes, in `dir`, a CA and a serving certificate it signs for the given
 * IP addresses and DNS names: enough for a TLS server whose clients verify
 * it against the CA (and for a CA key that a server may sign with itself).
 */
export function makeServingPki(dir: string, sans: { ips: string[]; dns: string[] }, commonName = 'vnfm test server'): ServingPki {
  const p = (f: string) => join(dir, f);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      p('ca.key'),
      '-out',
      p('ca.crt'),
      '-days',
      '2',
      '-subj',
      '/CN=vnfm test CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
    ],
    { stdio: 'pipe' },
  );
  execFileSync('openssl', ['req', '-new', ...ec, '-keyout', p('server.key'), '-out', p('server.csr'), '-subj', `/CN=${commonName}`], { stdio: 'pipe' });
  const altNames = [...sans.ips.map((ip) => `IP:${ip}`), ...sans.dns.map((d) => `DNS:${d}`)].join(',');
  writeFileSync(p('server.ext'), `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=${altNames}\n`);
  execFileSync(
    'openssl',
    ['x509', '-req', '-in', p('server.csr'), '-CA', p('ca.crt'), '-CAkey', p('ca.key'), '-CAcreateserial', '-days', '2', '-out', p('server.crt'), '-extfile', p('server.ext')],
    { stdio: 'pipe' },
  );
  return { caCertPath: p('ca.crt'), caKeyPath: p('ca.key'), certPath: p('server.crt'), keyPath: p('server.key'), caCert: readFileSync(p('ca.crt'), 'utf8') };
}

/** Makes an RSA key pair in `dir` as `<name>.key` (private, PKCS#8) and `<name>.pub` (SPKI). */
export function makeRsaKeyPair(dir: string, name: string): { keyPath: string; pubPath: string } {
  const keyPath = join(dir, `${name}.key`);
  const pubPath = join(dir, `${name}.pub`);
  execFileSync('openssl', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', keyPath], { stdio: 'pipe' });
  execFileSync('openssl', ['pkey', '-in', keyPath, '-pubout', '-out', pubPath], { stdio: 'pipe' });
  return { keyPath, pubPath };
}

/**
 * Makes, in `dir`, a key (`<name>.key`) and a certificate (`<name>.crt`)
 * signed by the CA whose files are given: for a server (`serverAuth`, with
 * the IP addresses and DNS names) or a client (`clientAuth`, the subject's
 * CN and O naming the user and its group as Kubernetes reads them).
 */
export function makeSignedCert(
  dir: string,
  ca: { caCertPath: string; caKeyPath: string },
  name: string,
  opts: { cn: string; org?: string; usage: 'serverAuth' | 'clientAuth'; ips?: string[]; dns?: string[] },
): { certPath: string; keyPath: string; cert: string; key: string } {
  const p = (f: string) => join(dir, f);
  const subject = `/CN=${opts.cn}${opts.org ? `/O=${opts.org}` : ''}`;
  execFileSync(
    'openssl',
    ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', p(`${name}.key`), '-out', p(`${name}.csr`), '-subj', subject],
    {
      stdio: 'pipe',
    },
  );
  const altNames = [...(opts.ips ?? []).map((ip) => `IP:${ip}`), ...(opts.dns ?? []).map((d) => `DNS:${d}`)].join(',');
  writeFileSync(
    p(`${name}.ext`),
    `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=${opts.usage}\n${altNames ? `subjectAltName=${altNames}\n` : ''}`,
  );
  execFileSync(
    'openssl',
    [
      'x509',
      '-req',
      '-in',
      p(`${name}.csr`),
      '-CA',
      ca.caCertPath,
      '-CAkey',
      ca.caKeyPath,
      '-CAcreateserial',
      '-days',
      '2',
      '-out',
      p(`${name}.crt`),
      '-extfile',
      p(`${name}.ext`),
    ],
    { stdio: 'pipe' },
  );
  return { certPath: p(`${name}.crt`), keyPath: p(`${name}.key`), cert: readFileSync(p(`${name}.crt`), 'utf8'), key: readFileSync(p(`${name}.key`), 'utf8') };
}
