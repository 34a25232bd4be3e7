#!/usr/bin/env node
// Registry connections benchmark: the kubernetes-mgmt driver's registry
// configuration on 20 nodes beside 1 node. Goal: 20 nodes take at most 1.5x
// the time of 1 (the nodes are configured in parallel).
//
// The nodes are the test nodes of test/support/nodes.ts: real sshd in their
// own network and mount namespaces on a bridge, with the docker, containerd
// and systemctl stand-ins (each node has both runtimes). Two real registries
// (Debian docker-registry) listen on the bridge's gateway address: one over
// HTTP, one over HTTPS with an htpasswd user and a CA made here. Each timed
// run connects over SSH (password, sudo), configures both connections
// (daemon.json, certs.d, hosts.toml, config.toml, /etc/hosts, runtime
// restarts, docker login against the HTTPS registry) and disconnects, from
// a clean state: between runs the nodes' files are reset, untimed. The 20
// nodes are done one at a time (for comparison), 10 at a time (the driver's
// default concurrency) and all 20 at once.
//
// Also printed: the CPU time vnfm used and the CPU time the whole machine was
// busy (/proc/stat; the nodes' sshd, sudo and stand-ins run on the same
// machine, and so does anything else running there). On a machine with few
// CPUs the 20 simulated nodes compete for them, which real VMs do not.
//
// Rounds are interleaved (1 node, 20 nodes at each limit); medians over RUNS
// rounds (default 5) after one warm-up. Needs root (namespaces, a bridge).
// Every node, registry and temp dir is removed at the end.
//
//   node bench/registry-connections.mjs [--json]
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const RUNS = Number(process.env.RUNS ?? 5);
const NODES = 20;
const LIMITS = [1, 10, 20];
const GOAL = 1.5;
const REGISTRY_NAME = 'registry.vnfm.bench';
const USER = 'bench';
const PASSWORD = 'bench-pull-secret';
const root = resolve(import.meta.dirname, '..');

if (process.getuid?.() !== 0) {
  console.error('bench: registry-connections needs root (network namespaces and a bridge for the test nodes)');
  process.exit(1);
}

// The driver module, the SSH seam and the test nodes (TypeScript) bundled
// under node_modules, so the npm packages resolve (build/ is rebuilt by others).
// test/support/nodes.ts keeps its own location (import.meta.url) in the
// bundle: it finds the stand-ins and the repository root (which the nodes
// mount) from it, so the bench runs from any checkout, /tmp included.
const supportDir = join(root, 'node_modules', '.cache', 'vnfm-bench-regconn');
mkdirSync(supportDir, { recursive: true });
const esbuild = await import(join(root, 'node_modules', 'esbuild', 'lib', 'main.js'));
const ownLocation = {
  name: 'own-import-meta-url',
  setup(build) {
    build.onLoad({ filter: /test[\\/]support[\\/]nodes\.ts$/ }, (args) => ({
      contents: readFileSync(args.path, 'utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
      loader: 'ts',
    }));
  },
};
await esbuild.build({
  plugins: [ownLocation],
  stdin: {
    contents: [
      "export { createNodeNetwork } from './test/support/nodes.ts';",
      "export { configureRegistryConnections, parseRegistryConnections } from './src/mgmt/kubernetes-mgmt/registry-connections.ts';",
      "export { connectSsh, forEachNode } from './src/mgmt/ssh/index.ts';",
    ].join('\n'),
    resolveDir: root,
    loader: 'ts',
  },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  outfile: join(supportDir, 'regconn.mjs'),
  logLevel: 'error',
});
const { createNodeNetwork, configureRegistryConnections, parseRegistryConnections, connectSsh, forEachNode } = await import(join(supportDir, 'regconn.mjs'));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function freePort(host) {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, host, () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

const work = mkdtempSync(join(tmpdir(), 'vnfm-bench-regconn-'));
const children = [];
let net;

async function startRegistry(name, address, tls) {
  const dir = join(work, name);
  mkdirSync(join(dir, 'data'), { recursive: true });
  const port = await freePort(address);
  const lines = ['version: 0.1', 'log:', '  level: error', 'storage:', '  filesystem:', `    rootdirectory: ${join(dir, 'data')}`, 'http:', `  addr: ${address}:${port}`];
  if (tls) lines.push('  tls:', `    certificate: ${tls.cert}`, `    key: ${tls.key}`, 'auth:', '  htpasswd:', '    realm: bench', `    path: ${tls.htpasswd}`);
  writeFileSync(join(dir, 'config.yml'), lines.join('\n') + '\n');
  const child = spawn('/usr/bin/docker-registry', ['serve', join(dir, 'config.yml')], { stdio: 'ignore' });
  children.push(child);
  const deadline = Date.now() + 15_000;
  for (;;) {
    const up = await new Promise((res) => {
      const s = createServer().on('error', () => res(true));
      // The port is taken once the registry listens.
      s.listen(port, address, () => s.close(() => res(false)));
    });
    if (up) return `${address}:${port}`;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`docker-registry ${name} did not start on ${address}:${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

try {
  const setupStarted = performance.now();
  net = await createNodeNetwork();
  const openssl = (...args) => execFileSync('openssl', args, { cwd: work, stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=vnfm bench CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${REGISTRY_NAME}`);
  writeFileSync(join(work, 'server.ext'), `subjectAltName=DNS:${REGISTRY_NAME},IP:${net.gateway}\n`);
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'server.ext');
  writeFileSync(join(work, 'htpasswd'), execFileSync('htpasswd', ['-Bin', USER], { input: `${PASSWORD}\n`, encoding: 'utf8' }));
  const pkg = join(work, 'package');
  mkdirSync(join(pkg, 'Files'), { recursive: true });
  writeFileSync(join(pkg, 'Files', 'ca.crt'), readFileSync(join(work, 'ca.crt')));

  const httpServer = await startRegistry('http', net.gateway);
  const httpsAddress = await startRegistry('https', net.gateway, { cert: join(work, 'server.crt'), key: join(work, 'server.key'), htpasswd: join(work, 'htpasswd') });
  const httpsServer = `${REGISTRY_NAME}:${httpsAddress.split(':').pop()}`;
  const connections = parseRegistryConnections(
    'bench',
    'private_registry_connection_info',
    [
      { connection_type: 0, server: httpServer },
      { connection_type: 1, server: httpsServer, username: USER, password: PASSWORD, certificate_path: 'Files/ca.crt', hosts_string: `${net.gateway} ${REGISTRY_NAME}` },
    ],
    pkg,
  );

  const nodes = [];
  for (let i = 0; i < NODES; i += 5) {
    nodes.push(...(await Promise.all(Array.from({ length: Math.min(5, NODES - i) }, (_, j) => net.node(`node${i + j + 1}`, `${net.prefix}1.${i + j + 1}`, { containerd: true })))));
  }
  const setupMs = performance.now() - setupStarted;

  const pinned = new Map();
  const hostKeys = { get: (id) => pinned.get(id), pin: (k) => pinned.set(k.serverId, k), forget: (ids) => ids.forEach((id) => pinned.delete(id)) };
  // The whole machine's busy CPU time (vnfm, sshd, sudo, the stand-ins all share it), from /proc/stat.
  const busyCpuMs = () => {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const idle = f[3] + f[4];
    return ((f.reduce((a, b) => a + b, 0) - idle) * 1000) / 100; // USER_HZ = 100
  };
  const configure = async (list, limit) => {
    const started = performance.now();
    const cpuStarted = busyCpuMs();
    const ownStarted = process.cpuUsage();
    const results = await forEachNode(
      list,
      limit,
      (n) => n.name,
      async (node) => {
        const session = await connectSsh(
          { host: node.address, username: 'ubuntu', password: 'ubuntu', serverId: node.name, label: `${node.name} (${node.address})` },
          { hostKeys, signal: AbortSignal.timeout(300_000), log: () => {}, secrets: [PASSWORD] },
        );
        try {
          return await configureRegistryConnections(session, connections, { packageDir: pkg });
        } finally {
          session.close();
        }
      },
    );
    const ms = performance.now() - started;
    const cpuMs = busyCpuMs() - cpuStarted;
    const own = process.cpuUsage(ownStarted);
    const vnfmCpuMs = (own.user + own.system) / 1000;
    for (const r of results) {
      if (r.changed.length !== 7 || r.restarted.length !== 2 || r.loggedIn.length !== 1) throw new Error(`bench: a node was not configured from scratch: ${JSON.stringify(r)}`);
    }
    return { ms, cpuMs, vnfmCpuMs };
  };
  // Through the nodes' host directories (their /etc, /root and /var/lib are bind mounts of these).
  const reset = async (list) => {
    for (const n of list) {
      for (const p of ['etc/docker', 'etc/containerd/certs.d', 'etc/containerd/config.toml', 'root/.docker', 'var-lib/standin/systemctl.log']) {
        rmSync(join(n.root, p), { recursive: true, force: true });
      }
      const hosts = join(n.root, 'etc', 'hosts');
      writeFileSync(
        hosts,
        readFileSync(hosts, 'utf8')
          .split('\n')
          .filter((l) => !l.includes(REGISTRY_NAME))
          .join('\n'),
      );
    }
  };

  const rows = { one: [], ...Object.fromEntries(LIMITS.map((l) => [`twenty@${l}`, []])) };
  const cpu = { one: [], ...Object.fromEntries(LIMITS.map((l) => [`twenty@${l}`, []])) };
  const vnfmCpu = { one: [], ...Object.fromEntries(LIMITS.map((l) => [`twenty@${l}`, []])) };
  for (let round = 0; round <= RUNS; round++) {
    await reset(nodes);
    const one = await configure([nodes[0]], 1);
    const many = {};
    for (const limit of LIMITS) {
      await reset(nodes);
      many[limit] = await configure(nodes, limit);
    }
    if (round === 0) continue; // warm-up: first connections pin host keys, caches fill
    rows.one.push(one.ms);
    cpu.one.push(one.cpuMs);
    vnfmCpu.one.push(one.vnfmCpuMs);
    for (const limit of LIMITS) {
      rows[`twenty@${limit}`].push(many[limit].ms);
      cpu[`twenty@${limit}`].push(many[limit].cpuMs);
      vnfmCpu[`twenty@${limit}`].push(many[limit].vnfmCpuMs);
    }
  }

  const oneMs = median(rows.one);
  const cpus = (await import('node:os')).availableParallelism();
  const result = {
    runs: RUNS,
    nodes: NODES,
    setupMs: Math.round(setupMs),
    medianMs: { oneNode: Math.round(oneMs), ...Object.fromEntries(LIMITS.map((l) => [`nodes${NODES}Limit${l}`, Math.round(median(rows[`twenty@${l}`]))])) },
    ratio: Object.fromEntries(LIMITS.map((l) => [`limit${l}`, Number((median(rows[`twenty@${l}`]) / oneMs).toFixed(2))])),
    goal: GOAL,
    medianVnfmCpuMs: { oneNode: Math.round(median(vnfmCpu.one)), ...Object.fromEntries(LIMITS.map((l) => [`nodes${NODES}Limit${l}`, Math.round(median(vnfmCpu[`twenty@${l}`]))])) },
    /** vnfm's own CPU for one node's configuration, alone and within the 20. */
    vnfmCpuMsPerNode: {
      oneNode: Math.round(median(vnfmCpu.one)),
      ...Object.fromEntries(LIMITS.map((l) => [`nodes${NODES}Limit${l}`, Math.round(median(vnfmCpu[`twenty@${l}`]) / NODES)])),
    },
    /** The wall time the machine allows at best: its busy CPU time spread over every CPU. */
    machineBoundFloorMs: Object.fromEntries(LIMITS.map((l) => [`nodes${NODES}Limit${l}`, Math.round(median(cpu[`twenty@${l}`]) / cpus)])),
    medianBusyCpuMs: { oneNode: Math.round(median(cpu.one)), ...Object.fromEntries(LIMITS.map((l) => [`nodes${NODES}Limit${l}`, Math.round(median(cpu[`twenty@${l}`]))])) },
    cpus,
  };
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(result, null, 2));
  } else {
    const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
    console.log(`${NODES} test nodes and 2 registries set up in ${s(setupMs)}; ${result.cpus} CPUs shared by vnfm and every node`);
    console.log(`registry connections (HTTP + HTTPS with CA, hosts line, login; docker and containerd), medians of ${RUNS} rounds:`);
    console.log(`  1 node:                  ${s(oneMs).padEnd(8)}  CPU: vnfm ${s(median(vnfmCpu.one))}, whole machine ${s(median(cpu.one))}`);
    for (const l of LIMITS) {
      const ratio = result.ratio[`limit${l}`];
      console.log(
        `  ${NODES} nodes, ${String(l).padStart(2)} at a time:  ${s(median(rows[`twenty@${l}`])).padEnd(8)}  CPU: vnfm ${s(median(vnfmCpu[`twenty@${l}`]))}, whole machine ${s(median(cpu[`twenty@${l}`])).padEnd(8)}  ${ratio}x of 1 node${l === 1 ? '' : ` (goal <= ${GOAL}x: ${ratio <= GOAL ? 'met' : 'not met'})`}`,
      );
    }
    console.log(
      `vnfm's own CPU per node: ${result.vnfmCpuMsPerNode.oneNode} ms alone; within ${NODES}: ${LIMITS.map((l) => `${result.vnfmCpuMsPerNode[`nodes${NODES}Limit${l}`]} ms (${l} at a time)`).join(', ')}`,
    );
    console.log(
      `${NODES} nodes' wall time against the machine-bound floor (busy CPU / ${cpus} CPUs): ${LIMITS.map((l) => `${s(median(rows[`twenty@${l}`]))} vs ${s(result.machineBoundFloorMs[`nodes${NODES}Limit${l}`])} (${l} at a time)`).join(', ')}`,
    );
  }
} finally {
  for (const c of children) {
    try {
      process.kill(c.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  await net?.close();
  rmSync(work, { recursive: true, force: true });
}
