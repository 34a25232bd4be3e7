/**
 * The credentials receiver client against a real HTTPS server on 127.0.0.1
 * with its own CA (made with openssl here): the JSON body, the bearer token,
 * retries after refusals and 5xx, TLS verification, and no secret in errors.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TimeoutError, ValidationError, VnfmError } from '../../src/errors.js';
import { parseReceiver, sendCredentials, type CredentialsPayload } from '../../src/mgmt/index.js';

interface Pki {
  dir: string;
  caCert: string;
  otherCaCert: string;
  serverCert: string;
  serverKey: string;
}

function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-receiver-pki-'));
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=receiver test CA');
  ssl('req', '-x509', ...ec, '-keyout', 'other.key', '-out', 'other.crt', '-days', '2', '-subj', '/CN=another CA');
  ssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'san.ext');
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return { dir, caCert: read('ca.crt'), otherCaCert: read('other.crt'), serverCert: read('server.crt'), serverKey: read('server.key') };
}

interface Received {
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  path: string;
}

/** An HTTPS receiver; `answers` are the statuses of successive requests (then 200). */
class Receiver {
  received: Received[] = [];
  answers: number[] = [];
  private server?: https.Server;

  constructor(private readonly pki: Pki) {}

  listen(port = 0): Promise<number> {
    this.server = https.createServer({ key: this.pki.serverKey, cert: this.pki.serverCert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.received.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')), path: req.url ?? '' });
        res.statusCode = this.answers.shift() ?? 200;
        // Echoes the secret back, as a careless receiver might: it must not reach vnfm's messages.
        res.end(JSON.stringify({ echo: Buffer.concat(chunks).toString('utf8') }));
      });
    });
    return new Promise((resolve) => this.server!.listen(port, '127.0.0.1', () => resolve((this.server!.address() as AddressInfo).port)));
  }

  close(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    return new Promise((resolve) => (s ? s.close(() => resolve()) : resolve()));
  }
}

const KUBECONFIG = 'apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: workload-secret-token-123\n';
const payload: CredentialsPayload = {
  vnfInstanceId: 'b3f1c0de-0000-4000-8000-000000000001',
  clusterName: 'workload-1',
  namespace: 'capi',
  kubeconfig: KUBECONFIG,
  server: 'https://127.0.0.1:7443',
  caCert: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
  token: 'workload-secret-token-123',
};
const BEARER = 'receiver-bearer-xyz';

/** A port nothing listens on (yet). */
async function freePort(pki: Pki): Promise<number> {
  const r = new Receiver(pki);
  const port = await r.listen();
  await r.close();
  return port;
}

function noSecrets(err: unknown): void {
  const text = `${(err as Error).message} ${(err as VnfmError).hint ?? ''}`;
  expect(text).not.toContain('workload-secret-token-123');
  expect(text).not.toContain(BEARER);
  expect(text).not.toContain('kind: Config');
  expect(text).not.toContain('secret=');
}

let pki: Pki;
let receiver: Receiver;
beforeAll(() => {
  pki = makePki();
});
afterAll(() => rmSync(pki.dir, { recursive: true, force: true }));
afterEach(async () => receiver?.close());

const signal = () => new AbortController().signal;

describe('sendCredentials', () => {
  it('POSTs the JSON with the bearer token, verifying the receiver against its CA', async () => {
    receiver = new Receiver(pki);
    const port = await receiver.listen();
    const sleeps: number[] = [];
    await sendCredentials({ url: `https://127.0.0.1:${port}/creds?tenant=a`, caCert: pki.caCert, bearerToken: BEARER }, payload, {
      signal: signal(),
      sleep: async (ms) => void sleeps.push(ms),
    });
    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0]!;
    expect(got.path).toBe('/creds?tenant=a');
    expect(got.headers['authorization']).toBe(`Bearer ${BEARER}`);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.body).toEqual(payload);
    expect(sleeps).toEqual([]);
  });

  it('sends no Authorization header without a bearer token', async () => {
    receiver = new Receiver(pki);
    const port = await receiver.listen();
    await sendCredentials({ url: `https://127.0.0.1:${port}/`, caCert: pki.caCert }, payload, { signal: signal() });
    expect(receiver.received[0]!.headers['authorization']).toBeUndefined();
  });

  it('retries with back-off while the receiver refuses connections, then delivers once it listens', async () => {
    receiver = new Receiver(pki);
    const port = await freePort(pki);
    const sleeps: number[] = [];
    const retries: string[] = [];
    await sendCredentials({ url: `https://127.0.0.1:${port}/creds`, caCert: pki.caCert, bearerToken: BEARER }, payload, {
      signal: signal(),
      sleep: async (ms) => {
        sleeps.push(ms);
        if (sleeps.length === 2) await receiver.listen(port);
      },
      onRetry: (m) => retries.push(m),
    });
    expect(sleeps).toEqual([1000, 2000]);
    expect(retries[0]).toMatch(/refused the connection \(ECONNREFUSED\); trying again in 1s/);
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.body).toEqual(payload);
  });

  it('retries 503 and 429 answers', async () => {
    receiver = new Receiver(pki);
    receiver.answers = [503, 429];
    const port = await receiver.listen();
    await sendCredentials({ url: `https://127.0.0.1:${port}/`, caCert: pki.caCert }, payload, { signal: signal(), sleep: async () => {} });
    expect(receiver.received).toHaveLength(3);
  });

  it('gives up after the retries with a message naming the receiver and the cluster, never the secrets', async () => {
    const port = await freePort(pki);
    const sleeps: number[] = [];
    const err = await sendCredentials({ url: `https://user:pw@127.0.0.1:${port}/creds?secret=abc`, caCert: pki.caCert, bearerToken: BEARER }, payload, {
      signal: signal(),
      retries: 3,
      sleep: async (ms) => void sleeps.push(ms),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VnfmError);
    expect((err as Error).message).toBe(
      `the credentials receiver at https://127.0.0.1:${port}/creds refused the connection (ECONNREFUSED) (4 attempts); the credentials of cluster capi/workload-1 were not delivered`,
    );
    expect((err as VnfmError).hint).toMatch(/op-retry/);
    expect(sleeps).toEqual([1000, 2000, 4000]);
    noSecrets(err);
    expect((err as Error).message).not.toContain('pw@');
  });

  it('fails at once on a 401, pointing at the bearer token, without the echoed body', async () => {
    receiver = new Receiver(pki);
    receiver.answers = [401];
    const port = await receiver.listen();
    const err = await sendCredentials({ url: `https://127.0.0.1:${port}/`, caCert: pki.caCert, bearerToken: BEARER }, payload, {
      signal: signal(),
      sleep: async () => {
        throw new Error('must not retry');
      },
    }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/answered 401 Unauthorized; the credentials of cluster capi\/workload-1 were not delivered/);
    expect((err as VnfmError).hint).toMatch(/bearerToken/);
    expect(receiver.received).toHaveLength(1);
    noSecrets(err);
  });

  it('refuses a receiver whose certificate the given CA did not sign, without retrying', async () => {
    receiver = new Receiver(pki);
    const port = await receiver.listen();
    const err = await sendCredentials({ url: `https://127.0.0.1:${port}/`, caCert: pki.otherCaCert }, payload, {
      signal: signal(),
      sleep: async () => {
        throw new Error('must not retry');
      },
    }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/presented a TLS certificate that could not be verified/);
    expect((err as VnfmError).hint).toMatch(/caCert/);
    expect(receiver.received).toHaveLength(0);
  });

  it('stops waiting when the operation times out, with the timeout as the error', async () => {
    const port = await freePort(pki);
    const ac = new AbortController();
    const err = await sendCredentials({ url: `https://127.0.0.1:${port}/`, caCert: pki.caCert }, payload, {
      signal: ac.signal,
      sleep: (_ms, s) => {
        ac.abort(new TimeoutError('timed out after 5s'));
        return Promise.reject(s.reason);
      },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
  });
});

describe('parseReceiver', () => {
  const parse = (v: unknown) => parseReceiver('req.json', 'additionalParams.vnfm_credentials_receiver', v);

  it('accepts url, caCert and bearerToken', () => {
    expect(parse({ url: 'https://r.example:8443/c', caCert: pki.caCert, bearerToken: 't' })).toEqual({ url: 'https://r.example:8443/c', caCert: pki.caCert, bearerToken: 't' });
  });

  it.each([
    [{ url: 'http://r.example/c' }, /url: must be an https:\/\/ URL/],
    [{ url: 'not a url' }, /url: must be an https:\/\/ URL/],
    [{ url: 'https://r/c', caCert: 'abc' }, /caCert: is not a PEM certificate/],
    [{ url: 'https://r/c', bearerToken: 5 }, /bearerToken: must be a non-empty string/],
    ['https://r/c', /must be an object/],
  ])('refuses %j', (value, message) => {
    expect(() => parse(value)).toThrow(ValidationError);
    expect(() => parse(value)).toThrow(message);
  });
});
