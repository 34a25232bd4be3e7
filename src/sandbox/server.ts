/**
 * vnfm sandbox: a Kubernetes API emulator that answers as kube-apiserver
 * 1.32 does, for what vnfm relies on. It runs no containers. README.md in
 * this folder lists what it serves, the in-process test API (controllers
 * options, fault switches) and what it deliberately does not do.
 *
 * Layers: this file is HTTP (TLS, bearer tokens, content negotiation, body
 * decoding, request faults, non-resource paths); request-info.ts parses
 * /api and /apis paths into discovery or resource requests; rest.ts serves
 * resource requests for any registered resource (resources.ts, kinds/);
 * objects.ts holds the object semantics the controllers share; store.ts is
 * the in-memory etcd; watch.ts streams changes; controllers/ and
 * namespace-controller.ts make objects behave.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import yaml from 'js-yaml';
import { generateSandboxCerts } from './certs.js';
import { loadSandboxIdentity, newSandboxToken } from './identity.js';
import { goJsonSyntaxError, MalformedJsonBody } from './go-json.js';
import { INITIAL_NAMESPACES, registerBuiltins, registerStartupObjects } from './builtin-resources.js';
import { reviewKinds } from './kinds/review-kinds.js';
import { discoveryAnswer } from './discovery.js';
import { startNamespaceController } from './namespace-controller.js';
import { customResourceDefinitions, startCrdController } from './crds.js';
import { bootstrapCluster, startControllers, type ControllerOptions } from './controllers/index.js';
import { startClusterApiController, type ClusterApiController, type WorkloadClusterEndpoint } from './controllers/cluster-api.js';
import { FaultRules, type SandboxFaults } from './faults.js';
import { decodeProtobufObject, PROTOBUF_CONTENT_TYPE } from './protobuf.js';
import { PATCH_TYPES } from './patch.js';
import { openApiV2Document, openApiV3Document, openApiV3Index } from './openapi.js';
import { encodeOpenApiV2, OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_TYPES } from './openapi-protobuf.js';
import { WatchHub, type WatchOptions } from './watch.js';
import { servePodLog } from './pod-logs.js';
import { ObjectApi } from './objects.js';
import { parseApiPath, type DiscoveryRequest } from './request-info.js';
import { ResourceRegistry, rfc3339, type KubeObject } from './resources.js';
import { RestHandler, type RequestMeta, type ResponseShape } from './rest.js';
import {
  ApiError,
  badRequest,
  serviceUnavailable,
  tooManyRequests,
  internalError,
  methodNotAllowed,
  notAcceptable,
  resourceNotFound,
  tooLarge,
  unauthorized,
  unsupportedMediaType,
} from './status.js';
import { ObjectStore } from './store.js';

/** The Kubernetes version the sandbox emulates. */
export const SANDBOX_KUBERNETES_VERSION = 'v1.32.0';

/** A running sandbox. */
export interface Sandbox {
  /** `https://host:port`, the API server URL clients use. */
  url: string;
  /** The CA certificate (PEM) that verifies the server's certificate. */
  caPem: string;
  /** The bearer token the server accepts. */
  token: string;
  /** Fault switches for tests (faults.ts). */
  faults: SandboxFaults;
  /**
   * The API servers started for Cluster API workload clusters (one per
   * provisioned `Cluster`; its `<cluster>-kubeconfig` Secret reaches it too).
   */
  workloadClusters(): WorkloadClusterEndpoint[];
  /** Stops listening, drops open connections, stops the controllers and every workload cluster's API server. */
  close(): Promise<void>;
}

export interface SandboxOptions {
  /** Address to listen on (default 127.0.0.1). The certificate also names it. */
  host?: string;
  /** Port; 0 (the default) picks a free one. */
  port?: number;
  /**
   * The bearer token to accept. When absent: the one kept in `stateDir`, or
   * a new random one. A token given here is used for this run only, never
   * written to `stateDir`.
   */
  token?: string;
  /**
   * Where the sandbox keeps its identity — CA, server certificate and token
   * (identity.ts) — so that a restart serves the same cluster to clients that
   * trusted it before. Without it every start makes a new identity, in memory
   * only. Objects are never kept: they live in memory.
   */
  stateDir?: string;
  /** Watch history and bookmark interval (watch.ts). */
  watch?: WatchOptions;
  /** The in-process controllers: readiness and termination delays, or none at all. */
  controllers?: ControllerOptions;
  /** Told of every authenticated request as it arrives (method and URL path with query): tests count what clients send. */
  onRequest?: (method: string, url: string) => void;
}

/** Largest request body the API server accepts (3 MiB). */
const MAX_BODY_BYTES = 3 * 1024 * 1024;

interface MediaRange {
  type: string;
  params: Record<string, string>;
}

function parseAccept(header: string | undefined): MediaRange[] {
  if (!header) return [{ type: '*/*', params: {} }];
  return header.split(',').map((range) => {
    const [type = '', ...params] = range.split(';').map((p) => p.trim());
    const parsed: Record<string, string> = {};
    for (const p of params) {
      const eq = p.indexOf('=');
      if (eq > 0) parsed[p.slice(0, eq).trim()] = p.slice(eq + 1).trim();
    }
    return { type: type.toLowerCase(), params: parsed };
  });
}

const isPlainJson = (r: MediaRange): boolean => ['application/json', 'application/*', '*/*'].includes(r.type) && r.params.as === undefined;
const isYaml = (r: MediaRange): boolean => r.type === 'application/yaml' && r.params.as === undefined;

type Encoding = 'json' | 'yaml';

/** Picks the first representation in the client's Accept list that the sandbox can produce. */
function negotiateObject(accept: MediaRange[]): { shape: ResponseShape; encoding: Encoding; contentType: string } {
  for (const r of accept) {
    if (r.type === 'application/json' && r.params.as === 'Table' && r.params.g === 'meta.k8s.io' && (r.params.v === 'v1' || r.params.v === 'v1beta1')) {
      return { shape: { table: r.params.v }, encoding: 'json', contentType: `application/json;as=Table;v=${r.params.v};g=meta.k8s.io` };
    }
    if (isPlainJson(r)) return { shape: {}, encoding: 'json', contentType: 'application/json' };
    if (isYaml(r)) return { shape: {}, encoding: 'yaml', contentType: 'application/yaml' };
  }
  throw notAcceptable();
}

function negotiateDiscovery(accept: MediaRange[], aggregatedAvailable: boolean): { aggregated: boolean; encoding: Encoding } {
  for (const r of accept) {
    if (aggregatedAvailable && r.type === 'application/json' && r.params.as === 'APIGroupDiscoveryList' && r.params.g === 'apidiscovery.k8s.io' && r.params.v === 'v2') {
      return { aggregated: true, encoding: 'json' };
    }
    if (isPlainJson(r)) return { aggregated: false, encoding: 'json' };
    if (isYaml(r)) return { aggregated: false, encoding: 'yaml' };
  }
  throw notAcceptable();
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(tooLarge());
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const JSON_BODY_TYPES = new Set(['application/json', '', PATCH_TYPES.json, PATCH_TYPES.merge, PATCH_TYPES.strategic]);

function mediaType(contentType: string | undefined): string {
  return (contentType ?? 'application/json').split(';')[0]!.trim().toLowerCase();
}

function decodeBody(raw: Buffer, contentType: string | undefined): unknown {
  if (raw.length === 0) return undefined;
  const type = mediaType(contentType);
  const text = type === PROTOBUF_CONTENT_TYPE ? '' : raw.toString('utf8');
  try {
    if (JSON_BODY_TYPES.has(type)) return JSON.parse(text);
    if (type === 'application/yaml' || type === PATCH_TYPES.apply) return yaml.load(text, { schema: yaml.JSON_SCHEMA });
  } catch (err) {
    const goError = JSON_BODY_TYPES.has(type) ? goJsonSyntaxError(raw) : undefined;
    if (goError) throw new MalformedJsonBody(raw, goError);
    throw badRequest(`the body of the request could not be decoded: ${(err as Error).message}`);
  }
  if (type === PROTOBUF_CONTENT_TYPE) return decodeProtobufObject(raw);
  throw unsupportedMediaType();
}

/** The request's body, read and decoded when the handler asks, and what the handler needs to know of it. */
function bodyReader(req: IncomingMessage): { body: () => Promise<unknown>; meta: RequestMeta } {
  let raw: Buffer | undefined;
  return {
    body: async () => decodeBody((raw = await readBody(req)), req.headers['content-type']),
    meta: { contentType: mediaType(req.headers['content-type']), userAgent: req.headers['user-agent'] ?? '', rawBody: () => raw },
  };
}

function tokenMatches(header: string | undefined, token: Buffer): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!match) return false;
  const given = Buffer.from(match[1]!, 'utf8');
  return given.length === token.length && timingSafeEqual(given, token);
}

function goPlatform(): string {
  const arch = ({ x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm' } as Record<string, string>)[process.arch] ?? process.arch;
  return `${process.platform}/${arch}`;
}

/** What /version answers. */
function versionInfoOf(startedAt: Date): Record<string, string> {
  return {
    major: '1',
    minor: SANDBOX_KUBERNETES_VERSION.split('.')[1]!,
    gitVersion: `${SANDBOX_KUBERNETES_VERSION}-vnfm-sandbox`,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: rfc3339(startedAt),
    // The sandbox is not built with Go; these name the runtime that serves it instead.
    goVersion: `node${process.versions.node}`,
    compiler: 'v8',
    platform: goPlatform(),
  };
}

function send(res: ServerResponse, code: number, body: unknown, encoding: Encoding = 'json', contentType?: string): void {
  const text = typeof body === 'string' ? body : encoding === 'yaml' ? yaml.dump(body, { noRefs: true }) : JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': contentType ?? (typeof body === 'string' ? 'text/plain; charset=utf-8' : encoding === 'yaml' ? 'application/yaml' : 'application/json'),
    'Cache-Control': 'no-cache, private',
    'X-Content-Type-Options': 'nosniff',
    'Audit-Id': randomUUID(),
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(res.req.method === 'HEAD' ? undefined : text);
}

function serveDiscovery(res: ServerResponse, registry: ResourceRegistry, serverAddress: string, request: DiscoveryRequest, accept: MediaRange[]): void {
  const aggregatable = request.type === 'core-versions' || request.type === 'groups';
  const { aggregated, encoding } = negotiateDiscovery(accept, aggregatable);
  const answer = discoveryAnswer(registry, serverAddress, request, aggregated, encoding);
  if (!answer) return send(res, 404, '404 page not found\n');
  send(res, 200, answer.text, encoding, answer.contentType);
}

/** A request fault rule for this request: throws its error, or resets the connection (true); false when none applies. */
function applyRequestFault(faultRules: FaultRules, method: string, path: string, req: IncomingMessage, res: ServerResponse): boolean {
  const fault = faultRules.requestFault(method, path);
  if (!fault) return false;
  if (fault.status === 'reset') {
    req.socket.destroy();
    return true;
  }
  const retryAfter = fault.retryAfterSeconds ?? 1;
  if (fault.status !== 500) res.setHeader('Retry-After', String(retryAfter));
  if (fault.status === 429) throw tooManyRequests(retryAfter);
  if (fault.status === 503) throw serviceUnavailable('the server is currently unable to handle the request');
  throw internalError('the sandbox was told to fail this request');
}

/** The paths outside /api and /apis: version, OpenAPI, health checks and the root list; false for any other. */
function serveNonResource(res: ServerResponse, method: string, path: string, accept: MediaRange[], registry: ResourceRegistry, versionInfo: Record<string, string>): boolean {
  if (path === '/version') {
    if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed();
    send(res, 200, versionInfo);
    return true;
  }
  if (path === '/openapi/v2') {
    // The first acceptable range wins: client-go asks for protobuf only, kubectl's older code for JSON.
    const chosen = accept.find((r) => isPlainJson(r) || OPENAPI_V2_PROTOBUF_TYPES.has(r.type));
    if (!chosen) throw notAcceptable();
    if (isPlainJson(chosen)) {
      send(res, 200, openApiV2Document(registry));
      return true;
    }
    const body = encodeOpenApiV2(openApiV2Document(registry) as Record<string, unknown>);
    res.writeHead(200, {
      'Content-Type': OPENAPI_V2_PROTOBUF,
      Vary: 'Accept',
      'Cache-Control': 'no-cache, private',
      'X-Content-Type-Options': 'nosniff',
      'Content-Length': body.length,
    });
    res.end(method === 'HEAD' ? undefined : body);
    return true;
  }
  if (path === '/openapi/v3' || path.startsWith('/openapi/v3/')) {
    const doc = path === '/openapi/v3' ? openApiV3Index(registry) : openApiV3Document(registry, path);
    if (!doc) send(res, 404, '404 page not found\n');
    else send(res, 200, doc);
    return true;
  }
  if (/^\/(healthz|livez|readyz)(\/[A-Za-z0-9-]+)?$/.test(path)) {
    send(res, 200, 'ok');
    return true;
  }
  if (path === '/') {
    const paths = [
      '/api',
      '/api/v1',
      '/apis',
      ...registry.groups().flatMap((g) => [`/apis/${g.name}`, ...g.versions.map((v) => `/apis/${g.name}/${v}`)]),
      '/healthz',
      '/livez',
      '/readyz',
      '/version',
    ];
    send(res, 200, { paths: paths.sort() });
    return true;
  }
  return false;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** The fault switches tests get, over the sandbox's rules and watches. */
function sandboxFaults(faultRules: FaultRules, watches: WatchHub): SandboxFaults {
  return {
    neverReady: (match) => faultRules.addNeverReady(match),
    neverEstablished: (match) => faultRules.addNeverEstablished(match),
    failPods: (match) => faultRules.addFailPods(match),
    failRequests: (fault) => faultRules.addRequestFault(fault),
    dropWatches: (o) => watches.dropAll(o?.abrupt ?? false),
    clear: () => faultRules.clear(),
  };
}

/** Starts a sandbox API server; resolves once it listens. */
export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  // What the sandbox keeps lives long (the objects, the watch history); what a request or a reconcile
  // makes is garbage at once. V8 would grow its young generation to 16 MiB semi-spaces under that
  // churn, a third of the process's memory with 5,000 objects; kept at its first size, it is collected
  // as often at no more CPU (V8 reads the flag whenever it would grow the young generation).
  setFlagsFromString('--semi-space-growth-factor=1');
  const host = opts.host ?? '127.0.0.1';
  const identity = opts.stateDir ? loadSandboxIdentity({ stateDir: opts.stateDir, hosts: [host] }) : undefined;
  const token = opts.token ?? identity?.token ?? newSandboxToken();
  const tokenBytes = Buffer.from(token, 'utf8');
  const startedAt = new Date();
  const certs = identity ?? generateSandboxCerts({ hosts: [host] });

  const registry = new ResourceRegistry();
  registerBuiltins(registry);
  for (const type of reviewKinds(token)) registry.register(type);
  registry.register(customResourceDefinitions);
  const store = new ObjectStore();
  const now = (): Date => new Date();
  const api = new ObjectApi(registry, store, now);
  const rest = new RestHandler({ registry, store, now }, api);
  const watches = new WatchHub(store, now, opts.watch);
  // A kind served later (a CRD's) gets a watch cache of its own, starting then.
  registry.onRegister((type) => watches.startTypeHistory(type.group, type.plural));
  for (const name of INITIAL_NAMESPACES) {
    api.create(api.type('', 'namespaces'), { metadata: { name } } as KubeObject, { manager: 'kube-apiserver' });
  }
  registerStartupObjects(api);
  const faultRules = new FaultRules();
  const readyDelayMs = opts.controllers?.readyDelayMs ?? 200;
  const controllerContext = {
    api,
    faults: faultRules,
    readyDelayMs,
    terminationDelayMs: opts.controllers?.terminationDelayMs ?? readyDelayMs,
    caPem: certs.caPem,
  };
  const namespaceController = startNamespaceController(controllerContext);
  const crdController = startCrdController(api, faultRules);

  const versionInfo = versionInfoOf(startedAt);

  let serverAddress = '';

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://sandbox.invalid');
    const method = (req.method ?? 'GET').toUpperCase();
    if (!tokenMatches(req.headers.authorization, tokenBytes)) throw unauthorized();
    opts.onRequest?.(method, req.url ?? '/');
    const accept = parseAccept(req.headers.accept);
    const path = url.pathname.replace(/\/+$/, '') || '/';
    if (applyRequestFault(faultRules, method, path, req, res)) return;

    if (serveNonResource(res, method, path, accept, registry, versionInfo)) return;

    const parsed = parseApiPath(method, path, ['1', 'true'].includes(url.searchParams.get('watch') ?? ''));
    switch (parsed.kind) {
      case 'unknown':
        send(res, 404, '404 page not found\n');
        return;
      case 'bad-method':
        throw methodNotAllowed();
      case 'discovery':
        if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed();
        serveDiscovery(res, registry, serverAddress, parsed.request, accept);
        return;
      case 'resource': {
        // An API group nobody serves falls through to the server's plain-text
        // not-found handler (JSON Status only from Kubernetes 1.38 on).
        if (parsed.request.group !== '' && !registry.groups().some((g) => g.name === parsed.request.group)) {
          send(res, 404, '404 page not found\n');
          return;
        }
        if (servePodLog(res, rest.api, parsed.request, method, url.searchParams, now)) return;
        const { shape, encoding, contentType } = negotiateObject(accept);
        const { body, meta } = bodyReader(req);
        const result = await rest.handle(parsed.request, url.searchParams, body, shape, meta);
        if ('watch' in result) {
          watches.serve(res, result.watch);
          return;
        }
        send(res, result.code, result.body, encoding, encoding === 'json' && shape.table ? contentType : undefined);
        return;
      }
    }
  }

  const server: Server = createServer({ key: certs.keyPem, cert: certs.certPem }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      const status = err instanceof ApiError ? err.status : internalError(err instanceof Error ? err.message : String(err)).status;
      if (!res.headersSent) send(res, status.code ?? 500, status);
      else res.destroy();
    });
  });
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await listen(server, opts.port ?? 0, host);
  const { port } = server.address() as AddressInfo;
  // A wildcard listener is reached through loopback; the certificate names 127.0.0.1.
  const connectHost = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  const urlHost = connectHost.includes(':') ? `[${connectHost}]` : connectHost;
  serverAddress = `${urlHost}:${port}`;

  bootstrapCluster(controllerContext, port);
  const controllers = startControllers(controllerContext, opts.controllers ?? {});
  // A workload cluster is another sandbox: its own CA, certificate and token, the same behaviour.
  const clusterApi: ClusterApiController | undefined =
    opts.controllers?.enabled !== false && opts.controllers?.clusterApi !== false
      ? startClusterApiController(controllerContext, () =>
          startSandbox({ host, ...(opts.watch ? { watch: opts.watch } : {}), ...(opts.controllers ? { controllers: opts.controllers } : {}) }),
        )
      : undefined;
  watches.startHistoryHere();

  return {
    url: `https://${urlHost}:${port}`,
    caPem: certs.caPem,
    token,
    faults: sandboxFaults(faultRules, watches),
    workloadClusters: () => clusterApi?.workloadClusters() ?? [],
    close: async () => {
      clusterApi?.stop();
      await clusterApi?.close();
      await new Promise<void>((resolve, reject) => {
        controllers.stop();
        namespaceController.stop();
        crdController.stop();
        watches.stop();
        server.close((err) => (err ? reject(err) : resolve()));
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}
