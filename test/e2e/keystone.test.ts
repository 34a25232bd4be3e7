/**
 * src/infra/openstack/keystone.ts against a real Keystone (Debian's keystone
 * under uwsgi on 127.0.0.1, started by test/support/keystone.ts), plus a few
 * small local servers for what a healthy Keystone cannot show: a port nobody
 * listens on, a server that never answers, and TLS.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VimCheckError } from '../../src/errors.js';
import { checkOpenStackVim, findEndpoint, issueToken, type KeystoneCredentials, type KeystonePasswordAuth } from '../../src/infra/openstack/keystone.js';
import { useKeystone, type KeystoneServer } from '../support/keystone.js';

const run = promisify(execFile);

let ks: KeystoneServer;

beforeAll(async () => {
  ks = await useKeystone();
});

afterAll(async () => {
  await ks?.stop();
});

function passwordCreds(auth: Partial<KeystonePasswordAuth> = {}, url = ks.url): KeystoneCredentials {
  return {
    authUrl: url,
    verifyTls: true,
    auth: { method: 'password', username: ks.user.name, password: ks.user.password, projectName: ks.project, ...auth },
  };
}

/** Awaits a VimCheckError and checks that no secret leaked into what the user would read. */
async function vimCheckError(promise: Promise<unknown>, ...secrets: string[]): Promise<VimCheckError> {
  const err = await promise.then(
    () => expect.unreachable('expected a VimCheckError'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(VimCheckError);
  const e = err as VimCheckError;
  expect(e.exitCode).toBe(6);
  for (const secret of [ks.user.password, ks.appCredential.secret, ...secrets]) {
    expect(`${e.message} ${e.hint ?? ''}`).not.toContain(secret);
  }
  return e;
}

/** A port on 127.0.0.1 that was free a moment ago and that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('tokens from the real Keystone', () => {
  it('password auth with user and project by name (domains default to Default)', async () => {
    const token = await issueToken(passwordCreds());
    expect(token.token).toMatch(/^\S{20,}$/);
    expect(token.projectId).toBe(ks.projectId);
    expect(token.expiresAt.getTime()).toBeGreaterThan(Date.now());
  });

  it('password auth with explicit domain names, and an auth_url without /v3 or with a trailing slash', async () => {
    const root = ks.url.replace(/\/v3$/, '');
    for (const url of [root, `${root}/`, `${ks.url}/`]) {
      const token = await issueToken(passwordCreds({ userDomainName: 'Default', projectDomainName: 'Default' }, url));
      expect(token.projectId, url).toBe(ks.projectId);
    }
  });

  it('password auth with user and project by id', async () => {
    const token = await issueToken(passwordCreds({ username: undefined, userId: ks.user.id, projectName: undefined, projectId: ks.projectId }));
    expect(token.projectId).toBe(ks.projectId);
  });

  it('application credential by id, and by name with its owner', async () => {
    const byId = await issueToken({
      authUrl: ks.url,
      verifyTls: true,
      auth: { method: 'application-credential', id: ks.appCredential.id, secret: ks.appCredential.secret },
    });
    expect(byId.projectId).toBe(ks.projectId);
    const byName = await issueToken({
      authUrl: ks.url,
      verifyTls: true,
      auth: { method: 'application-credential', name: 'vnfm-tests', username: ks.user.name, secret: ks.appCredential.secret },
    });
    expect(byName.projectId).toBe(ks.projectId);
  });

  it('finds the orchestration endpoint in the catalog by interface and region', async () => {
    const token = await issueToken(passwordCreds());
    const heat = `http://127.0.0.1:8004/v1/${ks.projectId}`;
    expect(findEndpoint(token, 'orchestration')).toBe(heat);
    expect(findEndpoint(token, 'orchestration', { interface: 'internal', region: ks.region })).toBe(heat);
    expect(findEndpoint(token, 'orchestration', { interface: 'admin' })).toBeUndefined();
    expect(findEndpoint(token, 'orchestration', { region: 'Nowhere' })).toBeUndefined();
    expect(findEndpoint(token, 'identity')).toBe(ks.url);
    expect(findEndpoint(token, 'compute')).toBeUndefined();
  });

  it('checkOpenStackVim reports the project, the Heat endpoint and the identity version', async () => {
    const result = await checkOpenStackVim({ ...passwordCreds(), regionName: ks.region });
    expect(result).toEqual({
      projectId: ks.projectId,
      orchestrationEndpoint: `http://127.0.0.1:8004/v1/${ks.projectId}`,
      identityVersion: expect.stringMatching(/^v3\.\d+$/),
    });
  });

  it('checkOpenStackVim fails when the region has no orchestration endpoint, naming the regions there are', async () => {
    const err = await vimCheckError(checkOpenStackVim({ ...passwordCreds(), regionName: 'Nowhere' }));
    expect(err.message).toMatch(/the catalog has no orchestration \(Heat\) endpoint in region "Nowhere"/);
    expect(err.hint).toContain(`"${ks.region}"`);
  });
});

describe('credentials Keystone refuses', () => {
  it('a wrong password: VimCheckError naming the user, never the password', async () => {
    const wrong = `wrong-${Math.random().toString(36).slice(2)}`;
    const err = await vimCheckError(issueToken(passwordCreds({ password: wrong })), wrong);
    expect(err.message).toMatch(new RegExp(`Keystone at .* rejected the credentials of user "${ks.user.name}".*401`));
    expect(err.hint).toMatch(/password/);
  });

  it('an unknown user: the same error', async () => {
    const err = await vimCheckError(issueToken(passwordCreds({ username: 'nobody-here' })));
    expect(err.message).toMatch(/rejected the credentials of user "nobody-here" \(domain "Default"\)/);
  });

  it('a wrong application credential secret', async () => {
    const wrong = `wrong-${Math.random().toString(36).slice(2)}`;
    const err = await vimCheckError(issueToken({ authUrl: ks.url, verifyTls: true, auth: { method: 'application-credential', id: ks.appCredential.id, secret: wrong } }), wrong);
    expect(err.message).toMatch(new RegExp(`rejected the credentials of application credential "${ks.appCredential.id}"`));
  });

  it('an unknown project: its own message, telling it apart from a wrong password', async () => {
    const err = await vimCheckError(issueToken(passwordCreds({ projectName: 'no-such-project' })));
    expect(err.message).toMatch(/accepted user "vnfuser".*project "no-such-project" \(domain "Default"\) does not exist or the user has no role on it/);
    expect(err.message).not.toMatch(/rejected the credentials/);
  });

  it('a project the user has no role on: the same message', async () => {
    const err = await vimCheckError(issueToken(passwordCreds({ projectName: 'admin' })));
    expect(err.message).toMatch(/project "admin" .*does not exist or the user has no role on it/);
  });
});

describe('a Keystone that cannot be reached', () => {
  it('connection refused on a closed port', async () => {
    const port = await closedPort();
    const err = await vimCheckError(issueToken(passwordCreds({}, `http://127.0.0.1:${port}/v3`)));
    expect(err.message).toBe(`http://127.0.0.1:${port} could not be reached (ECONNREFUSED)`);
  });

  describe('a server that accepts connections and never answers', () => {
    let silent: NetServer;
    const sockets: Socket[] = [];
    beforeAll(async () => {
      silent = createNetServer((socket) => sockets.push(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    });
    afterAll(async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });

    it('times out with the URL in the message', async () => {
      const { port } = silent.address() as { port: number };
      const err = await vimCheckError(issueToken(passwordCreds({}, `http://127.0.0.1:${port}`), { timeoutMs: 300 }));
      expect(err.message).toMatch(new RegExp(`http://127\\.0\\.0\\.1:${port} could not be reached: no answer within`));
    });

    it("an abort signal stops the request with the signal's reason", async () => {
      const { port } = silent.address() as { port: number };
      const controller = new AbortController();
      const pending = issueToken(passwordCreds({}, `http://127.0.0.1:${port}`), { signal: controller.signal });
      const reason = new Error('interrupted by the user');
      controller.abort(reason);
      await expect(pending).rejects.toBe(reason);
    });
  });
});

/*
 * TLS handling. Keystone itself runs on plain HTTP here, so a tiny HTTPS
 * server on 127.0.0.1 terminates TLS and relays each request to the real
 * Keystone. These tests check certificate verification and the in-memory CA
 * only; Keystone's behaviour is checked against the real one above.
 */
describe('TLS: certificate verification with an in-memory CA', () => {
  let dir: string;
  let caPem: string;
  let otherCaPem: string;
  let proxy: HttpsServer;
  let httpsUrl: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vnfm-keystone-tls-'));
    const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
    const ecKey = (name: string) => openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', name);
    await Promise.all([ecKey('ca.key'), ecKey('other-ca.key'), ecKey('server.key')]);
    await Promise.all([
      openssl('req', '-x509', '-new', '-key', 'ca.key', '-subj', '/CN=vnfm test CA', '-days', '2', '-out', 'ca.pem'),
      openssl('req', '-x509', '-new', '-key', 'other-ca.key', '-subj', '/CN=another CA', '-days', '2', '-out', 'other-ca.pem'),
      openssl('req', '-new', '-key', 'server.key', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-out', 'server.csr'),
    ]);
    await openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-copy_extensions', 'copy', '-out', 'server.pem');
    [caPem, otherCaPem] = await Promise.all([readFile(join(dir, 'ca.pem'), 'utf8'), readFile(join(dir, 'other-ca.pem'), 'utf8')]);

    const upstream = ks.url.replace(/\/v3$/, '');
    proxy = createHttpsServer({ key: await readFile(join(dir, 'server.key')), cert: await readFile(join(dir, 'server.pem')) }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        try {
          const answer = await fetch(`${upstream}${req.url}`, {
            method: req.method,
            headers: { 'content-type': req.headers['content-type'] ?? 'application/json', accept: 'application/json' },
            body: req.method === 'POST' ? Buffer.concat(chunks) : undefined,
          });
          const headers: Record<string, string> = { 'content-type': answer.headers.get('content-type') ?? 'application/json' };
          const subject = answer.headers.get('x-subject-token');
          if (subject) headers['x-subject-token'] = subject;
          res.writeHead(answer.status, headers);
          res.end(Buffer.from(await answer.arrayBuffer()));
        } catch (err) {
          res.writeHead(502);
          res.end(String(err));
        }
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    httpsUrl = `https://127.0.0.1:${(proxy.address() as { port: number }).port}/v3`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('without the CA: the certificate could not be verified, with a hint', async () => {
    const err = await vimCheckError(issueToken(passwordCreds({}, httpsUrl)));
    expect(err.message).toMatch(/^the certificate of https:\/\/127\.0\.0\.1:\d+ could not be verified/);
    expect(err.hint).toMatch(/ssl_ca_cert/);
    expect(err.hint).toMatch(/cert_verify/);
  });

  it('with a CA that did not sign the certificate: the same error', async () => {
    const err = await vimCheckError(issueToken({ ...passwordCreds({}, httpsUrl), caCert: otherCaPem }));
    expect(err.message).toMatch(/could not be verified/);
  });

  it('with the CA given in memory: a token and the whole VIM check', async () => {
    const creds = { ...passwordCreds({}, httpsUrl), caCert: caPem };
    expect((await issueToken(creds)).projectId).toBe(ks.projectId);
    expect((await checkOpenStackVim(creds)).orchestrationEndpoint).toBe(`http://127.0.0.1:8004/v1/${ks.projectId}`);
  });

  it('with verification explicitly turned off: a token without any CA', async () => {
    const token = await issueToken({ ...passwordCreds({}, httpsUrl), verifyTls: false });
    expect(token.projectId).toBe(ks.projectId);
  });

  it('a CA that is not PEM is refused before connecting', async () => {
    const err = await vimCheckError(issueToken({ ...passwordCreds({}, httpsUrl), caCert: 'not a certificate' }));
    expect(err.message).toMatch(/ssl_ca_cert\) is not a valid PEM certificate/);
  });

  it('https:// to a plain-HTTP Keystone: a TLS handshake failure that points at the scheme', async () => {
    const err = await vimCheckError(issueToken(passwordCreds({}, ks.url.replace(/^http:/, 'https:'))));
    expect(err.message).toMatch(/TLS handshake with https:\/\/127\.0\.0\.1:\d+ failed/);
    expect(err.hint).toMatch(/scheme/);
  });
});
