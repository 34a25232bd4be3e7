/**
 * A container's log through the API server, as `kubectl logs` reads it:
 * `GET /api/v1/namespaces/{ns}/pods/{name}/log`, which the API server
 * proxies to the pod's kubelet; each line handed on as it comes, and with
 * `follow` until the caller's signal ends it or the container stops.
 */
import { KubeApiError, type KubeClient } from './client.js';

export interface PodLogInput {
  namespace: string;
  pod: string;
  /** Required by the server for a pod of several containers. */
  container?: string;
  follow?: boolean;
  sinceSeconds?: number;
  tailLines?: number;
}

/**
 * What a driver that reads containers' logs offers (the Kubernetes driver
 * does): each line as text (UTF-8, a byte that is not shown as U+FFFD) and
 * as the bytes the container wrote, without the newline.
 */
export interface PodLogReader {
  podLog(input: PodLogInput, onLine: (line: string, bytes: Buffer) => void, signal: AbortSignal): Promise<void>;
}

/** How long a followed log may stay quiet before the connection is taken for dead: a quiet container is normal. */
const FOLLOW_IDLE_MS = 24 * 3600 * 1000;

export async function readPodLog(client: KubeClient, input: PodLogInput, onLine: (line: string, bytes: Buffer) => void, signal: AbortSignal): Promise<void> {
  const path = `/api/v1/namespaces/${encodeURIComponent(input.namespace)}/pods/${encodeURIComponent(input.pod)}/log`;
  const query = {
    ...(input.container ? { container: input.container } : {}),
    ...(input.follow ? { follow: true } : {}),
    ...(input.sinceSeconds !== undefined ? { sinceSeconds: input.sinceSeconds } : {}),
    ...(input.tailLines !== undefined ? { tailLines: input.tailLines } : {}),
  };
  let answer;
  try {
    answer = await client.stream({ method: 'GET', path, query, signal, rawLines: true, idleTimeoutMs: input.follow ? FOLLOW_IDLE_MS : 60_000 }, (line, bytes) =>
      onLine(line, bytes ?? Buffer.from(line)),
    );
  } catch (err) {
    if (signal.aborted) return;
    throw new KubeApiError(`cannot read the log of pod ${input.pod} in namespace ${input.namespace}: ${(err as Error).message}`, 0, undefined, {
      hint: 'check that the API server is running and reachable',
      cause: err,
    });
  }
  if (!answer) return;
  const body = answer.body as { message?: string; reason?: string } | string | undefined;
  const said = typeof body === 'string' ? body.trim() : (body?.message ?? '');
  throw new KubeApiError(
    `cannot read the log of pod ${input.pod} in namespace ${input.namespace}: HTTP ${answer.status}${said ? `: ${said}` : ''}`,
    answer.status,
    typeof body === 'object' ? body?.reason : undefined,
    {
      hint:
        answer.status === 404
          ? 'the pod is gone: vnfm vnf-sync VNF records the pods the instance has now'
          : answer.status === 400
            ? 'name a container with -c when the pod has several; a container that has not started has no log yet'
            : 'check the VIM (vnfm vim-check)',
    },
  );
}
