/**
 * Waiting by watching: list (or start from a known resourceVersion), then
 * follow the watch stream and re-evaluate a condition on every event until
 * it holds. A stream that ends or drops is re-opened from the last
 * resourceVersion seen (bookmarks included); a resourceVersion the server
 * has forgotten (410 Gone) makes it list again. Nothing here sleeps except
 * the backoff between reconnects.
 */
import { VnfmError } from '../../errors.js';
import type { KubeObject } from './driver-contract.js';
import { abortError, KubeApiError, statusOf, transientNetworkError, type KubeClient } from './client.js';
import { collectionPath, type ApiResource } from './discovery.js';

export interface WatchTarget {
  res: ApiResource;
  namespace?: string;
  /** One object by name (a fieldSelector), or … */
  name?: string;
  /** … every object matching a label selector. */
  labelSelector?: string;
}

export interface WatchStart {
  /** Objects known at `resourceVersion` (a create or update answer); without it the watch lists first. */
  objects: KubeObject[];
  resourceVersion: string;
}

/**
 * Evaluated on the objects seen so far; a value other than undefined ends the
 * wait. Throwing ends it too. `changed` is the object of the event just seen
 * (undefined after a list): a check that follows many objects looks at it alone.
 */
export type WatchCheck<T> = (objects: ReadonlyMap<string, KubeObject>, changed?: KubeObject) => T | undefined;

export interface WatchOptions {
  signal: AbortSignal;
  start?: WatchStart;
  /** Asks the server to end each stream after this long, so a stream silently lost is noticed (default 300). */
  timeoutSeconds?: number;
  /** Consecutive failed connection attempts tolerated before giving up (default 8). */
  maxFailures?: number;
}

interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject;
}

const GONE = 410;

class Relist extends Error {}

/** Items of a list carry no kind on the wire for built-in kinds; the checks need it. */
export function withKind(res: ApiResource, obj: KubeObject): KubeObject {
  return obj.kind ? obj : { ...obj, kind: res.kind, apiVersion: res.apiVersion };
}

function query(target: WatchTarget): Record<string, string | undefined> {
  return {
    fieldSelector: target.name === undefined ? undefined : `metadata.name=${target.name}`,
    labelSelector: target.labelSelector,
  };
}

/**
 * Lists `target`. With `notOlderThan` (a resourceVersion this client has
 * seen), the list is at least that recent, and the API server may answer it
 * from its watch cache instead of reading etcd (the API's "not older than"
 * list, every Kubernetes version; a server whose cache is behind that version
 * waits for it, and its 504 in the end is retried as any other).
 */
export async function listObjects(client: KubeClient, target: WatchTarget, signal: AbortSignal, notOlderThan?: string): Promise<{ items: KubeObject[]; resourceVersion: string }> {
  const list = await client.json<{ items?: KubeObject[]; metadata?: { resourceVersion?: string } }>(
    { method: 'GET', path: collectionPath(target.res, target.namespace), query: { ...query(target), resourceVersion: notOlderThan } },
    { what: `list ${target.res.plural}${target.namespace ? ` in namespace ${target.namespace}` : ''}`, signal },
  );
  return { items: (list.items ?? []).map((o) => withKind(target.res, o)), resourceVersion: list.metadata?.resourceVersion ?? '' };
}

/** Lists and watches `target` until `check` returns a value; honours `opts.signal`. */
export async function watchUntil<T>(client: KubeClient, target: WatchTarget, opts: WatchOptions, check: WatchCheck<T>): Promise<T> {
  const { signal } = opts;
  const objects = new Map<string, KubeObject>();
  const key = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  let resourceVersion: string | undefined;

  const relist = async () => {
    const list = await listObjects(client, target, signal);
    objects.clear();
    for (const o of list.items) objects.set(key(o), o);
    resourceVersion = list.resourceVersion;
  };

  if (opts.start) {
    for (const o of opts.start.objects) objects.set(key(o), withKind(target.res, o));
    resourceVersion = opts.start.resourceVersion;
  } else {
    await relist();
  }
  let result = check(objects);
  if (result !== undefined) return result;

  const maxFailures = opts.maxFailures ?? 8;
  let failures = 0;
  for (;;) {
    if (signal.aborted) throw abortError(signal);
    const conn = new AbortController();
    const onAbort = () => conn.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    let progressed = false;
    let fatal: unknown;
    try {
      const answer = await client.stream(
        {
          method: 'GET',
          path: collectionPath(target.res, target.namespace),
          query: { ...query(target), watch: 'true', resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds: opts.timeoutSeconds ?? 300 },
          signal: conn.signal,
        },
        (line) => {
          if (result !== undefined || fatal !== undefined) return;
          let event: WatchEvent;
          try {
            event = JSON.parse(line) as WatchEvent;
          } catch {
            return;
          }
          if (!event || !['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'].includes(event.type)) return;
          progressed = true;
          if (event.type === 'ERROR') {
            const status = statusOf(event.object);
            fatal =
              status.code === GONE
                ? new Relist()
                : new KubeApiError(`the watch of ${target.res.plural} failed: ${status.message ?? 'unknown error'}`, status.code ?? 0, status.reason);
            conn.abort();
            return;
          }
          const rv = event.object?.metadata?.resourceVersion;
          if (typeof rv === 'string' && rv) resourceVersion = rv;
          if (event.type === 'BOOKMARK') return;
          const obj = withKind(target.res, event.object);
          if (event.type === 'DELETED') objects.delete(key(obj));
          else objects.set(key(obj), obj);
          try {
            result = check(objects, obj);
          } catch (err) {
            fatal = err;
          }
          if (result !== undefined || fatal !== undefined) conn.abort();
        },
      );
      if (answer) {
        // The server refused the watch itself.
        if (answer.status === GONE) fatal = new Relist();
        else if (answer.status === 429 || answer.status >= 500) fatal = Object.assign(new Error(`HTTP ${answer.status}`), { code: 'ECONNRESET' });
        else
          fatal = new KubeApiError(
            `cannot watch ${target.res.plural}: the API server answered ${answer.status}: ${statusOf(answer.body).message ?? ''}`,
            answer.status,
            statusOf(answer.body).reason,
          );
      }
    } catch (err) {
      if (fatal === undefined && result === undefined) fatal = signal.aborted ? abortError(signal) : err;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    if (result !== undefined) return result;
    if (signal.aborted) throw abortError(signal);
    if (fatal instanceof Relist) {
      await relist();
      result = check(objects);
      if (result !== undefined) return result;
      continue;
    }
    if (fatal !== undefined && !transientNetworkError(fatal)) throw asVnfmError(fatal, target);
    // A dropped stream, or one the server ended (its timeout): open the next one where this one
    // stopped. Streams that keep failing or ending without a single event count as failures.
    failures = progressed ? 0 : failures + 1;
    if (failures > maxFailures) {
      throw asVnfmError(fatal ?? new Error('the stream keeps ending without events (does the server support watch?)'), target);
    }
    if (failures > 0) await client.retry.sleep(client.backoff(failures - 1), signal);
  }
}

function asVnfmError(err: unknown, target: WatchTarget): Error {
  if (err instanceof VnfmError) return err;
  const code = (err as { code?: unknown }).code;
  return new KubeApiError(`cannot watch ${target.res.plural}${typeof code === 'string' ? ` (${code})` : ''}: ${(err as Error).message ?? String(err)}`, 0, undefined, {
    hint: 'check that the API server is reachable, then retry the operation',
    cause: err,
  });
}
