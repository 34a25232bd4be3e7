/**
 * Which answers of the API server the driver's client tries again: what
 * waiting can change (busy, restarting, an internal error of the server),
 * not an error the server states about the request itself.
 */
import { describe, expect, it } from 'vitest';
import { KubeApiError, KubeClient, transientAnswer } from '../../src/infra/kubernetes/client.js';
import type { KubeHttpResponse, KubeTransport } from '../../src/infra/kubernetes/kube-api.js';

const status = (code: number, reason: string | undefined, message: string, headers: Record<string, string> = {}): KubeHttpResponse => ({
  status: code,
  headers,
  body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, ...(reason ? { reason } : {}), code },
});

/** What a real kube-apiserver answers to a server-side apply of a field the CRD's schema does not declare. */
const undeclaredField = status(
  500,
  undefined,
  'failed to create typed patch object (default/cp; infrastructure.cluster.x-k8s.io/v1beta1, Kind=OpenStackMachineTemplate): .spec.template.metadata: field not declared in schema',
);

function clientAnswering(answers: KubeHttpResponse[]) {
  const sleeps: number[] = [];
  let calls = 0;
  const transport: KubeTransport = {
    request: async () => {
      calls++;
      return answers.shift() ?? { status: 200, headers: {}, body: {} };
    },
    stream: async () => undefined,
    close: () => undefined,
  };
  const client = new KubeClient(transport, 'https://127.0.0.1:6443', { retries: 5, backoffMs: 100, maxBackoffMs: 1000, sleep: async (ms) => void sleeps.push(ms) });
  return { client, sleeps, calls: () => calls };
}

describe('transientAnswer', () => {
  it.each<[string, KubeHttpResponse, boolean]>([
    ['429 TooManyRequests', status(429, 'TooManyRequests', 'slow down'), true],
    ['503 ServiceUnavailable', status(503, 'ServiceUnavailable', 'unavailable'), true],
    ['504 Timeout', status(504, 'Timeout', 'timed out'), true],
    ['500 InternalError (etcd, a webhook)', status(500, 'InternalError', 'Internal error occurred: failed calling webhook'), true],
    ['500 with Retry-After', status(500, undefined, 'try later', { 'retry-after': '1' }), true],
    ['500 that is no Status (a proxy page)', { status: 500, headers: {}, body: '<html>bad gateway</html>' }, true],
    ['500 stating a field not declared in schema', undeclaredField, false],
    ['422 Invalid', status(422, 'Invalid', 'bad'), false],
    ['409 Conflict', status(409, 'Conflict', 'changed'), false],
  ])('%s: %s', (_name, res, transient) => {
    expect(transientAnswer(res)).toBe(transient);
  });
});

describe('KubeClient.call', () => {
  it('reports a 500 that states a deterministic error at once, as that error, not as an overloaded server', async () => {
    const { client, sleeps, calls } = clientAnswering([undeclaredField]);
    const err = await client
      .call({ method: 'PATCH', path: '/apis/x/v1/namespaces/d/things/t' }, { what: 'apply OpenStackMachineTemplate cp in namespace default' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(calls()).toBe(1);
    expect(sleeps).toEqual([]);
    expect((err as KubeApiError).transient).toBe(false);
    expect((err as KubeApiError).message).toBe(
      'cannot apply OpenStackMachineTemplate cp in namespace default: the API server answered 500: failed to create typed patch object (default/cp; infrastructure.cluster.x-k8s.io/v1beta1, Kind=OpenStackMachineTemplate): .spec.template.metadata: field not declared in schema',
    );
    expect((err as KubeApiError).hint).toMatch(/field its kind's schema does not declare/);
    expect((err as KubeApiError).hint).not.toMatch(/overloaded/);
  });

  it('still tries a 500 InternalError again, and says the server is failing when it keeps answering so', async () => {
    const internal = () => status(500, 'InternalError', 'Internal error occurred: etcdserver: leader changed');
    const { client, sleeps, calls } = clientAnswering([internal(), internal(), internal(), internal(), internal(), internal()]);
    const err = (await client.call({ method: 'GET', path: '/api/v1/namespaces' }, { what: 'list namespaces' }).catch((e: unknown) => e)) as KubeApiError;
    expect(calls()).toBe(6);
    expect(sleeps).toEqual([100, 200, 400, 800, 1000]);
    expect(err.transient).toBe(true);
    expect(err.message).toMatch(/answered 500 InternalError \(after 6 attempts\)/);
    expect(err.hint).toMatch(/overloaded or failing/);
  });
});
