/**
 * Faults of the OpenStack infra-driver on a real Keystone and Heat that this
 * file starts for itself (so it may restart and stop them): Heat restarted
 * mid-instantiate, tokens that expire during an operation, Keystone down
 * during a wait and at the start of an operation, a CA that does not match,
 * a flavour without BaseHOT, and a region without an orchestration endpoint.
 *
 * Keystone's tokens live TOKEN_LIFE_S seconds here, so every operation that
 * takes longer outlives the token it started with.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, vnfm, type RunResult, okStdoutWith } from '../support/cli.js';
import { projectToken, startHeat, type HeatServer, openStackVimConfig } from '../support/heat.js';
import { startKeystone, type KeystoneServer } from '../support/keystone.js';

const SAMPLE = resolve('csar-samples/heat-vnf');
const STANDINS = resolve('test/fixtures/heat/env/nova-neutron-standins.yaml');
const VNFD_ID = '72c3c844-4146-4e33-a2ab-fe1fbd9927fc';
const TOKEN_LIFE_S = 30;
// Each case drives the real Keystone and Heat through an outage or a restart and a token's life: 105–150 s on a
// 2-core machine, so the limit leaves room for a slow one rather than failing it.
const LONG = 300_000;

let ks: KeystoneServer;
let heat: HeatServer;
let home: string;
let work: string;
let vimConfig: string;

const run = (args: string[]): Promise<RunResult> => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } });
const ok = okStdoutWith((args) => run(args));

interface Op {
  id: string;
  vnfInstanceId: string;
  operation: string;
  operationState: string;
}
const opsOf = async (vnf: string): Promise<Op[]> => (JSON.parse(await ok(['op-list', '-o', 'json'])) as Op[]).filter((o) => o.vnfInstanceId === vnf);

async function show(vnf: string) {
  return JSON.parse(await ok(['vnf-show', vnf, '-o', 'json'])) as {
    instantiationState: string;
    instantiatedVnfInfo?: { vnfcInfo: Array<{ id: string; vduId: string }>; scaleStatus: Array<{ aspectId: string; scaleLevel: number }> };
  };
}

/** What Heat shows the test user: the stack and its events; undefined when there is none. */
async function stackOf(vnf: string): Promise<{ status: string; events: Array<{ resource_name: string; resource_status: string }> } | undefined> {
  const token = await projectToken(ks);
  const headers = { 'x-auth-token': token, accept: 'application/json' };
  const res = await fetch(`${heat.url}/stacks/vnf-${vnf}`, { headers });
  if (res.status === 404) return undefined;
  const stack = ((await res.json()) as { stack: { id: string; stack_status: string } }).stack;
  const events = await fetch(`${heat.url}/stacks/vnf-${vnf}/${stack.id}/events?sort_dir=asc`, { headers });
  return { status: stack.stack_status, events: ((await events.json()) as { events: Array<{ resource_name: string; resource_status: string }> }).events };
}

/** Polls Heat (every 200 ms) until `ready` holds for the instance's stack. */
async function until(vnf: string, what: string, ready: (s: NonNullable<Awaited<ReturnType<typeof stackOf>>>) => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const s = await stackOf(vnf).catch(() => undefined);
    if (s && ready(s)) return;
    if (Date.now() > deadline) throw new Error(`stack vnf-${vnf} never ${what} (last: ${s?.status ?? 'none'})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * While Keystone is paused, listens on its port in its place and drops every
 * connection unanswered, as a Keystone that is down would; resolves once vnfm
 * asks there for a token with the VIM user's password (Heat's own requests
 * carry no such password), or once `operation` ended without needing one.
 */
async function untilTokenAskedWhileDown(operation: Promise<unknown>): Promise<void> {
  const port = Number(new URL(ks.url).port);
  let asked!: () => void;
  const askedPromise = new Promise<void>((r) => (asked = r));
  const standIn = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.method === 'POST' && req.url?.endsWith('/auth/tokens') && body.includes(JSON.stringify(ks.user.password))) asked();
      res.socket?.destroy();
    });
  });
  await new Promise<void>((r, reject) => standIn.once('error', reject).listen(port, '127.0.0.1', () => r()));
  try {
    await Promise.race([askedPromise, operation]);
  } finally {
    standIn.closeAllConnections();
    await new Promise<void>((r) => standIn.close(() => r()));
  }
}

const newInstance = async (name: string) => JSON.parse(await ok(['vnf-create', '--package', VNFD_ID, '--name', name, '-o', 'json'])).id as string;
const instantiateArgs = (vnf: string) => ['vnf-instantiate', vnf, '--request-file', join(work, 'instantiate.json'), '--heat-environment', STANDINS];

beforeAll(async () => {
  ks = await startKeystone({ tokenExpirationSeconds: TOKEN_LIFE_S });
  heat = await startHeat(ks);
  home = newHome();
  work = dirname(home);
  vimConfig = join(work, 'vim.yaml');
  await writeFile(vimConfig, openStackVimConfig(ks, { region: false }));
  await ok(['vim-register', '--config-file', vimConfig, '--is-default', 'os1']);
  await ok(['vnfpkg-build', join(SAMPLE, 'package'), '-o', join(work, 'heat-vnf.zip')]);
  await ok(['vnfpkg-onboard', join(work, 'heat-vnf.zip')]);
  const request = (await readFile(join(SAMPLE, 'requests/instantiate.json'), 'utf8')).replace('REPLACE-WITH-EXTERNAL-NETWORK-ID', 'net-public-1');
  await writeFile(join(work, 'instantiate.json'), request);
  // Starting Keystone and Heat from nothing takes minutes on a loaded 2-core
  // machine (the real API server tier runs beside this file).
}, 2 * LONG);

afterAll(async () => {
  await heat?.stop();
  await ks?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('Heat and Keystone going away mid-operation', () => {
  it(
    'Heat restarted mid-instantiate: the stack left CREATE_IN_PROGRESS is taken over by an update and the operation completes',
    async () => {
      const vnf = await newInstance('restart');
      const instantiating = run([...instantiateArgs(vnf), '-o', 'json']);
      // A resource done and others under way: the engine has work in hand when it goes.
      await until(vnf, 'started creating', (s) => s.status === 'CREATE_IN_PROGRESS' && s.events.some((e) => e.resource_status === 'CREATE_COMPLETE'));
      await heat.restart();
      const r = await instantiating;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/Heat restarted and left the stack CREATE_IN_PROGRESS with no progress: sending the update again to take the work over/);
      expect(JSON.parse(r.stdout).operationState).toBe('COMPLETED');
      expect((await stackOf(vnf))?.status).toBe('UPDATE_COMPLETE');
      expect((await show(vnf)).instantiatedVnfInfo!.vnfcInfo.map((v) => v.vduId).sort()).toEqual(['VDU1', 'VDU2']);
      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
      expect(await stackOf(vnf)).toBeUndefined();
    },
    LONG,
  );

  it(
    `a GRACEFUL terminate that waits longer than a token lives (${TOKEN_LIFE_S} s) gets a new token and deletes the stack`,
    async () => {
      const vnf = await newInstance('token');
      await ok(instantiateArgs(vnf));
      const started = Date.now();
      await ok(['vnf-terminate', vnf, '--termination-type', 'GRACEFUL', '--graceful-termination-timeout', String(TOKEN_LIFE_S + 5), '--yes']);
      expect(Date.now() - started).toBeGreaterThan((TOKEN_LIFE_S + 5) * 1000);
      expect(await stackOf(vnf)).toBeUndefined();
      expect((await show(vnf)).instantiationState).toBe('NOT_INSTANTIATED');
    },
    LONG,
  );

  it(
    'Keystone down during a scale-out wait: Heat fails the update it cannot authenticate (FAILED_TEMP with its reason) or the wait rides it out; either way the scale ends COMPLETED, after op-retry if needed',
    async () => {
      const vnf = await newInstance('ks-wait');
      await ok(instantiateArgs(vnf));
      const scaling = run(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect']);
      await until(vnf, 'started the update', (s) => s.status === 'UPDATE_IN_PROGRESS');
      await ks.pause();
      try {
        // The outage lasts until vnfm asks for a new token (past half a token's life; Heat cannot be asked meanwhile: it needs Keystone too).
        await untilTokenAskedWhileDown(scaling);
      } finally {
        await ks.resume();
      }
      const r = await scaling;
      if (r.code !== 0) {
        // Heat's engine needs Keystone too: what it was doing when Keystone went fails, and Heat says so.
        expect(r.stderr).toMatch(/ended UPDATE_FAILED: .*(DiscoveryFailure|Unable to establish connection)/);
        const op = (await opsOf(vnf)).find((o) => o.operation === 'SCALE')!;
        expect(op.operationState).toBe('FAILED_TEMP');
        await ok(['op-retry', op.id]);
      }
      expect((await opsOf(vnf)).find((o) => o.operation === 'SCALE')!.operationState).toBe('COMPLETED');
      expect((await show(vnf)).instantiatedVnfInfo!.scaleStatus).toEqual([{ aspectId: 'vdu1_aspect', scaleLevel: 1 }]);
      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
    },
    LONG,
  );

  it(
    'Keystone down when an operation starts: exit 6 naming Keystone, nothing recorded; once it is back the scale completes',
    async () => {
      const vnf = await newInstance('ks-down');
      await ok(instantiateArgs(vnf));
      const before = (await opsOf(vnf)).length;
      await ks.pause();
      let r: RunResult;
      try {
        r = await run(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect']);
      } finally {
        await ks.resume();
      }
      expect(r.code, r.stderr).toBe(6);
      expect(r.stderr).toMatch(/127\.0\.0\.1:\d+ could not be reached/);
      expect(await opsOf(vnf)).toHaveLength(before);
      await ok(['vnf-scale', vnf, '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect']);
      expect((await show(vnf)).instantiatedVnfInfo!.vnfcInfo.filter((v) => v.vduId === 'VDU1')).toHaveLength(2);
      await ok(['vnf-terminate', vnf, '--termination-type', 'FORCEFUL', '--yes']);
    },
    LONG,
  );
});

describe('bad input', () => {
  it(
    'a flavour with no BaseHOT in the package, whose VNFD cannot make one: exit 2 naming the folder and what is missing, nothing created',
    async () => {
      // The VNFD declares flavour "simple"; this copy of the package has its Base HOT under another name, and its internal network no CIDR.
      const pkg = join(work, 'no-hot');
      execFileSync('cp', ['-r', join(SAMPLE, 'package'), pkg]);
      execFileSync('mv', [join(pkg, 'BaseHOT/simple'), join(pkg, 'BaseHOT/other')]);
      const meta = join(pkg, 'TOSCA-Metadata/TOSCA.meta');
      await writeFile(meta, (await readFile(meta, 'utf8')).replaceAll('BaseHOT/simple/', 'BaseHOT/other/'));
      const other = '5b0c4d0e-2222-4c5e-9a63-000000000002';
      const vnfd = join(pkg, 'Definitions/heat_vnf_top.vnfd.yaml');
      await writeFile(vnfd, (await readFile(vnfd, 'utf8')).replaceAll(VNFD_ID, other));
      const df = join(pkg, 'Definitions/heat_vnf_df_simple.yaml');
      await writeFile(df, (await readFile(df, 'utf8')).replace('                cidr: 192.168.10.0/24\n', ''));
      await ok(['vnfpkg-build', pkg, '-o', join(work, 'no-hot.zip')]);
      await ok(['vnfpkg-onboard', join(work, 'no-hot.zip')]);
      const target = JSON.parse(await ok(['vnf-create', '--package', other, '--name', 'nh', '-o', 'json'])).id as string;
      const r = await run(['vnf-instantiate', target, '--request-file', join(work, 'instantiate.json'), '--heat-environment', STANDINS]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(
        /has no Base HOT for flavour "simple" \(BaseHOT\/simple\/\), and the HOT of flavour simple cannot be made from its VNFD .*virtual link internalVL1 has no .*cidr/,
      );
      expect(await stackOf(target)).toBeUndefined();
    },
    LONG,
  );

  it('a region without an orchestration endpoint: vim-register fails with exit 6 and stores nothing', async () => {
    const h = newHome();
    const path = join(work, 'nowhere.yaml');
    await writeFile(path, `${await readFile(vimConfig, 'utf8')}region_name: Nowhere\n`);
    const r = await vnfm(['vim-register', '--config-file', path, 'nowhere'], { home: h });
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/no orchestration \(Heat\) endpoint in region "Nowhere"/);
    expect(r.stderr).not.toContain(ks.user.password);
    expect((await vnfm(['vim-list', '-o', 'json'], { home: h })).stdout.trim()).toBe('[]');
  });

  describe('a CA that does not match', () => {
    let proxy: HttpsServer;
    let httpsUrl: string;
    let pki: string;

    beforeAll(async () => {
      pki = mkdtempSync(join(tmpdir(), 'vnfm-os-ca-'));
      const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: pki, stdio: 'pipe' });
      for (const key of ['ca.key', 'other-ca.key', 'server.key']) openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key);
      openssl('req', '-x509', '-new', '-key', 'ca.key', '-subj', '/CN=vnfm test CA', '-days', '2', '-out', 'ca.pem');
      openssl('req', '-x509', '-new', '-key', 'other-ca.key', '-subj', '/CN=another CA', '-days', '2', '-out', 'other-ca.pem');
      openssl('req', '-new', '-key', 'server.key', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-out', 'server.csr');
      openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-copy_extensions', 'copy', '-out', 'server.pem');
      // TLS in front of the test Keystone: each request relayed as is.
      const upstream = ks.url.replace(/\/v3$/, '');
      proxy = createHttpsServer({ key: readFileSync(join(pki, 'server.key')), cert: readFileSync(join(pki, 'server.pem')) }, (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          void (async () => {
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
          })().catch((err: unknown) => {
            res.writeHead(502);
            res.end(String(err));
          });
        });
      });
      await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
      httpsUrl = `https://127.0.0.1:${(proxy.address() as { port: number }).port}/v3`;
    });

    afterAll(async () => {
      await new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r()));
      if (pki) await rm(pki, { recursive: true, force: true });
    });

    const configWith = async (name: string, ca: string) => {
      const path = join(work, name);
      const indented = ca
        .trim()
        .split('\n')
        .map((l) => `  ${l}`)
        .join('\n');
      await writeFile(path, `${(await readFile(vimConfig, 'utf8')).replace(ks.url, httpsUrl)}ssl_ca_cert: |\n${indented}\n`);
      return path;
    };

    it("vim-register with an ssl_ca_cert that did not sign Keystone's certificate fails with exit 6; the right CA registers", async () => {
      const h = newHome();
      const bad = await vnfm(['vim-register', '--config-file', await configWith('wrong-ca.yaml', readFileSync(join(pki, 'other-ca.pem'), 'utf8')), 'wrong-ca'], { home: h });
      expect(bad.code).toBe(6);
      expect(bad.stderr).toMatch(/certificate of https:\/\/127\.0\.0\.1:\d+ could not be verified/);
      expect((await vnfm(['vim-list', '-o', 'json'], { home: h })).stdout.trim()).toBe('[]');
      const good = await vnfm(['vim-register', '--config-file', await configWith('right-ca.yaml', readFileSync(join(pki, 'ca.pem'), 'utf8')), 'right-ca'], { home: h });
      expect(good.code, good.stderr).toBe(0);
    });
  });
});
