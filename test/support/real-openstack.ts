/**
 * A real OpenStack for the tests, from Debian bookworm's Zed packages
 * (test/support/install-debian-deps.sh): Keystone, Heat, Nova (API,
 * conductor, scheduler, one compute with the fake virt driver: real API,
 * scheduling and placement, no hypervisor), Placement, Neutron (ML2, Linux
 * bridge agent, `local` tenant networks) and Glance (file store), with
 * PostgreSQL and RabbitMQ. It runs in a private network namespace on that
 * namespace's 127.0.0.1 (cloud-namespace.ts); the relay gives the host's
 * 127.0.0.1 the same ports, so vnfm and the tests use the catalog's URLs as
 * they are. About 2.5 GiB; a cold start takes minutes (`figures`).
 *
 * There is no Cinder: stacks with volumes are not for this cloud.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudNamespace } from './cloud-namespace.js';
import { randomSecret } from './openstack-process.js';
import * as confs from './real-openstack-conf.js';
import type { CloudLayout } from './real-openstack-conf.js';
import { adminToken } from './real-openstack-seed.js';
import * as svc from './real-openstack-services.js';

/** What the tests learn about the cloud; plain data. */
export interface RealOpenStackInfo {
  /** Keystone's v3 URL and its admin (project `admin`, domain Default); tests make their own projects and users. */
  keystone: { url: string; adminPassword: string; region: string };
  endpoints: { identity: string; orchestration: string; compute: string; network: string; image: string; placement: string };
  namespace: string;
  /** Nova's only compute host. */
  computeHost: string;
  dir: string;
  figures: CloudFigures;
}

export interface CloudFigures {
  /** From the call to everything ready. */
  coldStartMs: number;
  /** Milliseconds of each step, from the start of the cold start to its end. */
  steps: Record<string, number>;
  /** Proportional set size of every process of the cloud, right after the start. */
  pssMiB: number;
}

export interface RealOpenStack extends RealOpenStackInfo {
  /** The cloud's processes' PSS now, in MiB, and their count. */
  memory(): { pssMiB: number; processes: number };
  /** Stops every process by pid, removes the namespace and the directory. Idempotent. */
  stop(): Promise<void>;
}

const REGION = 'RegionOne';
const COMPUTE_HOST = 'vnfm-compute';

function layoutFor(dir: string, ports: number[]): CloudLayout {
  const [keystone, heat, nova, neutron, glance, placement] = ports as [number, number, number, number, number, number];
  return {
    dir,
    ports: { keystone, heat, nova, neutron, glance, placement },
    pgSocketDir: join(dir, 'pg'),
    pgPort: 5432,
    computeHost: COMPUTE_HOST,
    region: REGION,
    passwords: {
      heat: randomSecret(),
      heatDomainAdmin: randomSecret(),
      nova: randomSecret(),
      neutron: randomSecret(),
      glance: randomSecret(),
      placement: randomSecret(),
    },
  };
}

function writeConfs(l: CloudLayout): void {
  for (const sub of ['log', 'lock', 'keystone', 'heat', 'placement', 'nova', 'neutron', 'glance/images', 'glance/staging', 'glance/tasks'])
    mkdirSync(join(l.dir, sub), { recursive: true });
  const files: Record<string, string> = {
    'keystone/keystone.conf': confs.keystoneConf(l),
    'heat/heat.conf': confs.heatConf(l),
    'placement/placement.conf': confs.placementConf(l),
    'glance/glance-api.conf': confs.glanceConf(l),
    'neutron/neutron.conf': confs.neutronConf(l),
    'neutron/ml2.ini': confs.ml2Conf(),
    'nova/nova.conf': confs.novaConf(l),
  };
  for (const [file, text] of Object.entries(files)) writeFileSync(join(l.dir, file), text, { mode: 0o600 });
}

/** Sum of the PSS of `pids` (from /proc/<pid>/smaps_rollup), in MiB. */
function pssMiB(pids: number[]): number {
  let kib = 0;
  for (const pid of pids) {
    try {
      kib += Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      /* gone */
    }
  }
  return Math.round(kib / 1024);
}

/**
 * Starts the cloud: every step as soon as what it needs is there (the
 * databases' schemas in parallel once PostgreSQL runs; Nova's compute once
 * Keystone knows its users and Placement answers). `log` hears each step.
 */
export async function startRealOpenStack(log: (line: string) => void = () => {}): Promise<RealOpenStack> {
  const t0 = Date.now();
  const dir = mkdtempSync(join(tmpdir(), `vnfm-realos-${process.pid}-`));
  // PostgreSQL runs as its own user in pg/.
  chmodSync(dir, 0o711);
  let ns: CloudNamespace;
  try {
    ns = CloudNamespace.create(dir, join(dir, 'log'));
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const stop = async () => {
    await ns.destroy(['postgres']);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const l = layoutFor(dir, await ns.relayPorts(6));
    writeConfs(l);
    const steps: Record<string, number> = {};
    const mark = (name: string) => {
      steps[name] = Date.now() - t0;
      log(`${name} at ${(steps[name] / 1000).toFixed(0)} s`);
    };
    const step = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
      const value = await run();
      mark(name);
      return value;
    };
    step.mark = mark;
    const adminPassword = randomSecret();
    await bringUp(ns, l, adminPassword, step);
    const keystone = { url: confs.keystoneUrl(l), adminPassword, region: l.region };
    const endpoints = {
      identity: keystone.url,
      orchestration: `http://127.0.0.1:${l.ports.heat}/v1/%(tenant_id)s`,
      compute: `http://127.0.0.1:${l.ports.nova}/v2.1`,
      network: `http://127.0.0.1:${l.ports.neutron}`,
      image: `http://127.0.0.1:${l.ports.glance}`,
      placement: `http://127.0.0.1:${l.ports.placement}`,
    };
    const memory = () => {
      const pids = ns.pids();
      return { pssMiB: pssMiB(pids), processes: pids.length };
    };
    const figures = { coldStartMs: Date.now() - t0, steps, pssMiB: memory().pssMiB };
    return { keystone, endpoints, namespace: ns.name, computeHost: l.computeHost, dir, figures, memory, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Runs a step of the cold start and records when it ended; `mark` records a moment inside one. */
type Step = (<T>(name: string, run: () => Promise<T>) => Promise<T>) & { mark(name: string): void };

/** The order of the cold start; every chain ends before this returns, also when one fails. */
async function bringUp(ns: CloudNamespace, l: CloudLayout, adminPassword: string, step: Step): Promise<void> {
  const chains: Promise<unknown>[] = [];
  const chain = <T>(p: Promise<T>): Promise<T> => {
    chains.push(p);
    // Failures are collected below; a chain waiting on another must not count as unhandled meanwhile.
    p.catch(() => undefined);
    return p;
  };
  const postgres = chain(step('postgres', () => svc.startPostgres(ns, l)));
  const rabbit = chain(step('rabbitmq', () => svc.startRabbit(ns, l)));
  const keystone = chain(postgres.then(() => step('keystone', () => svc.startKeystone(ns, l, adminPassword, step.mark))));
  const heatSchema = chain(postgres.then(() => step('heat schema', () => svc.migrateHeat(ns, l))));
  const placement = chain(postgres.then(() => step('placement', () => svc.startPlacement(ns, l))));
  chain(Promise.all([postgres, rabbit]).then(() => step('glance', () => svc.startGlance(ns, l))));
  const neutron = chain(Promise.all([postgres, rabbit]).then(() => step('neutron', () => svc.startNeutron(ns, l))));
  const novaSchema = chain(postgres.then(() => step('nova schema', () => svc.migrateNova(ns, l))));
  // Each of them authenticates to Keystone as it starts, and exits when its user is not there yet.
  const novaControl = chain(
    Promise.all([novaSchema, rabbit, keystone]).then(() => {
      for (const s of ['conductor', 'scheduler', 'api'] as const) svc.startNovaService(ns, l, s);
    }),
  );
  chain(novaControl.then(() => step('nova api', () => svc.waitForHttp(ns, 'Nova', `http://127.0.0.1:${l.ports.nova}/`, [200]))));
  // Its first resource report goes to Placement: when that fails it is tried again only a minute later.
  chain(
    Promise.all([novaControl, placement, neutron]).then(() => {
      svc.startNovaService(ns, l, 'compute');
      return step('compute', () => svc.waitForCompute(ns, l));
    }),
  );
  chain(Promise.all([keystone, heatSchema]).then(() => step('heat', () => svc.startHeat(ns, l, () => adminToken(confs.keystoneUrl(l), adminPassword)))));
  const results = await Promise.allSettled(chains);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
