/**
 * `GET /api/v1/namespaces/{ns}/pods/{name}/log`, as a kubelet answers it
 * through the API server: plain text, one line each. No container runs in
 * the sandbox, so its lines stand in for a container's output: that it
 * started (at the pod's start time) and is ready, then, while a client
 * follows, one line a `lineIntervalMs`. `container` (required for a pod of
 * several), `tailLines`, `sinceSeconds`, `timestamps` and `follow` are
 * honoured as the kubelet does; a pod whose containers have not started
 * answers 400 as a real one does.
 */
import type { ServerResponse } from 'node:http';
import type { ObjectApi } from './objects.js';
import type { ResourceRequest } from './request-info.js';
import type { KubeObject } from './resources.js';
import { badRequest } from './status.js';

/** How often a followed log gets a line; tests may shorten it. */
export const LOG_LINE_INTERVAL_MS = 1000;

type Obj = Record<string, any>;

interface Line {
  at: Date;
  text: string;
}

/** The container the request names, or the pod's only one. */
function containerOf(pod: KubeObject, query: URLSearchParams): string {
  const names = (((pod.spec as Obj | undefined)?.containers as Obj[] | undefined) ?? []).map((c) => String(c.name));
  const asked = query.get('container');
  if (asked) {
    if (!names.includes(asked)) throw badRequest(`container ${asked} is not valid for pod ${pod.metadata.name}`);
    return asked;
  }
  if (names.length === 1) return names[0]!;
  throw badRequest(`a container name must be specified for pod ${pod.metadata.name}, choose one of: [${names.join(' ')}]`);
}

/** Serves `req` when it asks for a pod's log (true); false for any other request. */
export function servePodLog(
  res: ServerResponse,
  api: ObjectApi,
  req: ResourceRequest,
  method: string,
  query: URLSearchParams,
  now: () => Date,
  intervalMs = LOG_LINE_INTERVAL_MS,
): boolean {
  if (req.group !== '' || req.resource !== 'pods' || req.subresource !== 'log' || !req.namespace || !req.name || (method !== 'GET' && method !== 'HEAD')) return false;
  const name = req.name;
  const pod = api.get(api.type('', 'pods'), req.namespace, name);
  const container = containerOf(pod, query);
  const st = (pod.status as Obj | undefined) ?? {};
  const cs = ((st.containerStatuses as Obj[] | undefined) ?? []).find((c) => c.name === container);
  const startedAt = cs?.state?.running?.startedAt ?? cs?.state?.terminated?.startedAt;
  if (!startedAt) throw badRequest(`container "${container}" in pod "${name}" is waiting to start: ContainerCreating`);
  const node = String((pod.spec as Obj | undefined)?.nodeName ?? '');
  const started = new Date(startedAt as string);
  const lines: Line[] = [{ at: started, text: `${container}: started on ${node} (the sandbox runs no container: these lines stand in for its output)` }];
  if (cs?.ready) lines.push({ at: started, text: `${container}: ready` });
  if (cs?.state?.terminated) lines.push({ at: new Date(cs.state.terminated.finishedAt as string), text: `${container}: exited with code ${cs.state.terminated.exitCode}` });
  const since = Number(query.get('sinceSeconds') ?? NaN);
  const tail = Number(query.get('tailLines') ?? NaN);
  const stamps = ['1', 'true'].includes(query.get('timestamps') ?? '');
  const format = (l: Line) => `${stamps ? `${l.at.toISOString()} ` : ''}${l.text}\n`;
  let shown = Number.isFinite(since) ? lines.filter((l) => l.at.getTime() >= now().getTime() - since * 1000) : lines;
  if (Number.isFinite(tail) && tail >= 0) shown = tail === 0 ? [] : shown.slice(-tail);
  const follow = ['1', 'true'].includes(query.get('follow') ?? '') && !cs?.state?.terminated;
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-cache, private', ...(follow ? { 'Transfer-Encoding': 'chunked' } : {}) });
  if (!follow) {
    res.end(shown.map(format).join(''));
    return true;
  }
  res.write(shown.map(format).join(''));
  let n = 0;
  const timer = setInterval(() => {
    n += 1;
    res.write(format({ at: now(), text: `${container}: alive (${n})` }));
  }, intervalMs);
  const stop = () => clearInterval(timer);
  res.on('close', stop);
  res.req.on('close', stop);
  return true;
}
