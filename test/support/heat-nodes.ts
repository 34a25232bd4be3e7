/**
 * Nova for the tests on the Heat without Nova (test/fixtures/heat/env/): a
 * watcher that polls a stack's resources and keeps one simulated node
 * (test/support/nodes.ts) per `OS::Nova::Server` stand-in, at the server's
 * addresses (those of its stand-in ports):
 *  - a new server boots a node;
 *  - a server gone (scale-in, terminate) stops its node;
 *  - a new server at the address of a known node (a heal replaces the server,
 *    its ports and so its addresses stay) rebuilds that node: fresh /etc and
 *    host keys, processes gone, the data volume kept.
 * And `heatEnvironmentFor`, the Heat environment that puts the stand-in
 * ports' addresses on a NodeNetwork.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';
import type { HeatInfo } from './heat.js';
import { projectToken } from './heat.js';
import type { KeystoneInfo } from './keystone.js';
import type { NodeNetwork, NodeOptions, TestNode } from './nodes.js';

const STANDINS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'heat', 'env');

/** How the watcher reaches Heat: an orchestration URL and a token source. */
export interface HeatAccess {
  /** `http://127.0.0.1:<port>/v1/<project id>` */
  url: string;
  token(): Promise<string>;
}

export interface WatchOptions {
  /** Heat access, or the test Keystone and Heat as `useOpenStack` gives them. */
  heat: HeatAccess | { heat: Pick<HeatInfo, 'url'>; keystone: KeystoneInfo };
  /** The stack to watch (vnfm names an instance's stack `vnf-<instance id>`); it may not exist yet. */
  stackName: string;
  /** Node options by the server's resource name (the VDU id in Tacker-style templates). */
  node?: (vduId: string) => NodeOptions;
  /** Default 500 (each poll lists the stack's resources to the nested depth, which loads a single-process Heat). */
  pollMs?: number;
  /** Data paths a heal keeps (rebuild's keep), default that of rebuild(). */
  keep?: string[];
}

export interface StackNodes {
  /** Resolves once at least `count` servers have a running node, with those nodes. */
  ready(count: number, timeoutMs?: number): Promise<TestNode[]>;
  /** The nodes by the server's id (the stand-in server's physical resource id). */
  nodes(): Map<string, TestNode>;
  /** What the watcher did, in order: `boot VDU1 10.x.y.z`, `rebuild …`, `stop …`. */
  events(): string[];
  /** Stops watching (the nodes stay, for NodeNetwork.close()). */
  close(): Promise<void>;
}

interface HeatResource {
  resource_name: string;
  resource_type: string;
  resource_status: string;
  physical_resource_id: string;
  links: Array<{ href: string; rel: string }>;
}

interface Tracked {
  node: TestNode;
  vdu: string;
  /** The stack the server is in (its ports are there too). */
  stack: string | undefined;
  /** Powered off: its server was marked unhealthy or is gone while its port stays. */
  down?: boolean;
}

function accessOf(heat: WatchOptions['heat']): HeatAccess {
  if ('token' in heat) return heat;
  const { keystone } = heat;
  let cached: { token: string; at: number } | undefined;
  return {
    url: heat.heat.url,
    async token() {
      if (!cached || Date.now() - cached.at > 10 * 60_000) cached = { token: await projectToken(keystone), at: Date.now() };
      return cached.token;
    },
  };
}

/** Watches `stackName` and plays Nova for its servers on `net`. */
export function watchStackNodes(net: NodeNetwork, opts: WatchOptions): StackNodes {
  const access = accessOf(opts.heat);
  const pollMs = opts.pollMs ?? 500;
  const byServer = new Map<string, Tracked>();
  // Nodes whose server went while a port with its address stayed: a heal
  // deletes the server before creating its replacement at that address.
  const awaitingServer = new Set<Tracked>();
  const log: string[] = [];
  let lastError: unknown;
  let closed = false;
  let polling: Promise<void> = Promise.resolve();
  const waiters = new Set<() => void>();

  async function heatGet<T>(url: string): Promise<T | undefined> {
    const res = await fetch(url, { headers: { 'x-auth-token': await access.token(), accept: 'application/json' } });
    if (res.status === 404) {
      await res.arrayBuffer();
      return undefined;
    }
    if (!res.ok) throw new Error(`Heat GET ${url}: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
    return (await res.json()) as T;
  }

  /** The server's addresses on this network, its first address first. */
  const stackOf = (r: HeatResource) => r.links.find((l) => l.rel === 'stack')?.href;

  async function attributes(r: HeatResource): Promise<Record<string, unknown>> {
    const stackLink = stackOf(r);
    if (!stackLink) return {};
    const shown = await heatGet<{ resource: { attributes?: Record<string, unknown> } }>(`${stackLink}/resources/${encodeURIComponent(r.resource_name)}`);
    return shown?.resource.attributes ?? {};
  }

  /** Addresses of the stand-in ports in `stackLink`. */
  async function portAddresses(resources: HeatResource[], stackLink: string | undefined): Promise<Set<string>> {
    const found = new Set<string>();
    for (const p of resources) {
      if (p.resource_type !== 'OS::Neutron::Port' || p.resource_status.startsWith('DELETE_') || stackOf(p) !== stackLink) continue;
      const fixed = (await attributes(p)).fixed_ips as Array<{ ip_address?: string }> | undefined;
      for (const f of fixed ?? []) if (f.ip_address) found.add(f.ip_address);
    }
    return found;
  }

  async function serverAddresses(r: HeatResource): Promise<string[]> {
    const attrs = await attributes(r);
    const found: string[] = [];
    const first = attrs.first_address;
    if (typeof first === 'string' && first) found.push(first);
    const addresses = attrs.addresses as Record<string, Array<{ addr?: string }>> | undefined;
    for (const list of Object.values(addresses ?? {})) for (const a of list ?? []) if (a.addr) found.push(a.addr);
    return [...new Set(found)].filter((a) => a.startsWith(net.prefix) && a !== net.gateway);
  }

  async function pollOnce(): Promise<void> {
    const list = await heatGet<{ resources: HeatResource[] }>(`${access.url}/stacks/${encodeURIComponent(opts.stackName)}/resources?nested_depth=10`);
    // Not found: the stack is gone (terminate), or one of its nested stacks went while Heat listed them (a scale in
    // deletes one). Only the first means no servers; taking the second for it would stop every node and boot them anew.
    if (!list && (await heatGet(`${access.url}/stacks/${encodeURIComponent(opts.stackName)}`))) return;
    const resources = list?.resources ?? [];
    const servers = resources.filter((r) => r.resource_type === 'OS::Nova::Server' && r.physical_resource_id && !r.resource_status.startsWith('DELETE_'));
    const present = new Set(servers.map((r) => r.physical_resource_id));

    for (const r of servers) {
      if (byServer.has(r.physical_resource_id) || !r.resource_status.endsWith('_COMPLETE')) continue;
      const addresses = await serverAddresses(r);
      if (addresses.length === 0) continue;
      // The same address as a node we run: a heal's replacement server.
      const overlaps = (t: Tracked) => t.node.addresses.some((a) => addresses.includes(a));
      const previous = [...byServer.entries()].find(([, t]) => overlaps(t));
      const waiting = [...awaitingServer].find(overlaps);
      if (previous || waiting) {
        const tracked = previous ? previous[1] : waiting!;
        if (previous) byServer.delete(previous[0]);
        awaitingServer.delete(tracked);
        await tracked.node.rebuild(opts.keep ? { keep: opts.keep } : {});
        tracked.down = false;
        tracked.stack = stackOf(r);
        byServer.set(r.physical_resource_id, tracked);
        log.push(`rebuild ${r.resource_name} ${tracked.node.address}`);
        continue;
      }
      const node = await net.node(`${r.resource_name}-${r.physical_resource_id.slice(0, 8)}`, addresses, opts.node?.(r.resource_name) ?? {});
      byServer.set(r.physical_resource_id, { node, vdu: r.resource_name, stack: stackOf(r) });
      log.push(`boot ${r.resource_name} ${addresses.join(',')}`);
    }
    for (const [id, tracked] of [...byServer]) {
      // Marked unhealthy (a heal under way): the VM is as good as gone; its replacement boots at the same address.
      const failed = servers.find((r) => r.physical_resource_id === id && r.resource_status === 'CHECK_FAILED');
      if (failed && !tracked.down) {
        tracked.down = true;
        await tracked.node.powerOff();
        log.push(`power off ${tracked.vdu} ${tracked.node.address}`);
      }
      if (present.has(id)) continue;
      byServer.delete(id);
      const ports = await portAddresses(resources, tracked.stack);
      if (tracked.node.addresses.some((a) => ports.has(a))) {
        awaitingServer.add(tracked);
        if (!tracked.down) await tracked.node.powerOff();
        tracked.down = true;
        log.push(`server gone, port kept ${tracked.vdu} ${tracked.node.address}`);
        continue;
      }
      await tracked.node.stop();
      log.push(`stop ${tracked.vdu} ${tracked.node.address}`);
    }
    for (const tracked of [...awaitingServer]) {
      const ports = await portAddresses(resources, tracked.stack);
      if (tracked.node.addresses.some((a) => ports.has(a))) continue;
      awaitingServer.delete(tracked);
      await tracked.node.stop();
      log.push(`stop ${tracked.vdu} ${tracked.node.address}`);
    }
  }

  async function loop(): Promise<void> {
    while (!closed) {
      try {
        await pollOnce();
        lastError = undefined;
      } catch (e) {
        lastError = e;
      }
      for (const w of [...waiters]) w();
      if (closed) break;
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }
  polling = loop();

  return {
    ready(count, timeoutMs = 180_000) {
      return new Promise<TestNode[]>((resolveReady, reject) => {
        const check = () => {
          if (byServer.size >= count) {
            done();
            resolveReady([...byServer.values()].map((t) => t.node));
          } else if (closed) {
            done();
            reject(new Error(`stack ${opts.stackName}: watcher closed with ${byServer.size} of ${count} nodes`));
          }
        };
        const timer = setTimeout(() => {
          done();
          const why = lastError instanceof Error ? `; last error: ${lastError.message}` : '';
          reject(new Error(`stack ${opts.stackName}: ${byServer.size} of ${count} server nodes after ${timeoutMs} ms (${log.join('; ') || 'nothing seen'})${why}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    nodes() {
      return new Map([...byServer].map(([id, t]) => [id, t.node]));
    },
    events() {
      return [...log];
    },
    async close() {
      closed = true;
      await polling;
      for (const w of [...waiters]) w();
    },
  };
}

/**
 * Writes a Heat environment into `dir` (the stand-in resource_registry with
 * its standins/ copied beside it) whose `parameter_defaults.standin_addresses`
 * is `addresses`: port resource name → a whole address on `net`, or a prefix
 * such as `net.prefix` for the members of a scaling group. Returns its path,
 * for `--heat-environment`.
 */
export async function heatEnvironmentFor(net: NodeNetwork, dir: string, addresses: Record<string, string>): Promise<string> {
  for (const [port, a] of Object.entries(addresses)) {
    if (!a.startsWith(net.prefix)) throw new Error(`heat environment: ${port}: ${a} is not on the node network ${net.prefix}0.0/16`);
  }
  mkdirSync(dir, { recursive: true });
  cpSync(join(STANDINS_DIR, 'standins'), join(dir, 'standins'), { recursive: true });
  const base = yaml.load(readFileSync(join(STANDINS_DIR, 'nova-neutron-standins.yaml'), 'utf8')) as { resource_registry: Record<string, unknown> };
  const file = join(dir, 'test-nodes-env.yaml');
  writeFileSync(
    file,
    '# Heat environment of simulated nodes: the Nova and Neutron stand-ins, and the\n# addresses their ports take on the node network.\n' +
      yaml.dump({ resource_registry: base.resource_registry, parameter_defaults: { standin_addresses: addresses } }),
  );
  return file;
}
