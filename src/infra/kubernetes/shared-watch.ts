/**
 * One watch per kind and namespace for all the objects an operation waits
 * on, instead of one per object: the first wait on a (kind, namespace) lists
 * it once and follows it (watch.ts: reconnects, 410 relists, backoff); every
 * other wait on an object of that kind and namespace reads the same state and
 * is told of its own object's events only. What the operation's writes
 * answered (a create's object) stands until the shared state knows something
 * newer, and an object whose answer already satisfies its wait opens no
 * watch at all. The feeds end with the operation (close()).
 */
import type { KubeObject } from './driver-contract.js';
import { setMaxListeners } from 'node:events';
import { abortError, type KubeClient } from './client.js';
import type { ApiResource } from './discovery.js';
import { watchUntil, withKind, type WatchCheck } from './watch.js';

/** A resource's key in seenVersions(). */
export const resourceKey = (res: ApiResource): string => `${res.group}/${res.plural}`;

const keyOf = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/**
 * Whether `a` is a later version of the object than `b`. resourceVersions
 * are opaque to clients, but both servers vnfm meets (etcd's revisions, the
 * sandbox's counter) hand out increasing integers; anything else counts as
 * later, so the shared state wins.
 */
function laterThan(a: KubeObject, b: KubeObject): boolean {
  const ra = a.metadata.resourceVersion;
  const rb = b.metadata.resourceVersion;
  if (typeof ra !== 'string' || typeof rb !== 'string' || !/^\d+$/.test(ra) || !/^\d+$/.test(rb)) return true;
  return BigInt(ra) >= BigInt(rb);
}

interface Waiter {
  /** The object as last seen: the write's answer, then the shared state's. */
  obj: KubeObject | undefined;
  evaluate(): void;
  /** The shared watch failed for good (watchUntil's error). */
  fail(err: unknown): void;
}

/**
 * The shared watch of one kind in one namespace. Listed (`from` undefined):
 * it lists first and knows every object. From a version: it starts watching
 * at the oldest write answer of the objects awaited when it starts (one tick
 * after the first of them), lists nothing, and knows only what changed since.
 */
class Feed {
  state: ReadonlyMap<string, KubeObject> = new Map();
  readonly synced: Promise<void>;
  private readonly waiters = new Map<string, Set<Waiter>>();
  private started = false;

  constructor(
    private readonly client: KubeClient,
    readonly res: ApiResource,
    private readonly namespace: string | undefined,
    private readonly signal: AbortSignal,
    private readonly timeoutSeconds: number | undefined,
    private readonly onEnd: (err: unknown) => void,
    /** Told the version of every object the feed delivers. */
    private readonly onSeen: (rv: bigint | undefined) => void,
    /** The resourceVersion to watch from; lowered by joins until the feed starts. */
    public from?: bigint,
  ) {
    let markSynced!: () => void;
    let fail!: (err: unknown) => void;
    this.synced = new Promise<void>((resolve, reject) => {
      markSynced = resolve;
      fail = reject;
    });
    this.synced.catch(() => undefined);
    this.markSynced = markSynced;
    this.failSynced = fail;
    if (from === undefined) this.start();
    else setImmediate(() => this.start());
  }

  private readonly markSynced: () => void;
  private readonly failSynced: (err: unknown) => void;

  /** Whether a waiter whose object is at `rv` can still join: the watch has not started past it. */
  canJoin(rv: bigint): boolean {
    if (this.from === undefined) return false;
    if (rv >= this.from) return true;
    if (this.started) return false;
    this.from = rv;
    return true;
  }

  private start(): void {
    if (this.signal.aborted) return;
    this.started = true;
    let listed = this.from === undefined;
    const follow: WatchCheck<never> = (objects, changed) => {
      this.state = objects;
      if (changed === undefined) for (const o of objects.values()) this.onSeen(numericVersion(o));
      else this.onSeen(numericVersion(changed));
      if (changed === undefined) {
        // Starting from a version there is nothing listed yet; the waiters keep their write answers.
        if (!listed) {
          listed = true;
          return undefined;
        }
        // A list (the first, or again after the server forgot the version): everyone looks again.
        this.markSynced();
        for (const [key, set] of this.waiters) for (const w of [...set]) this.tell(w, objects.get(key));
      } else {
        const key = keyOf(changed);
        for (const w of [...(this.waiters.get(key) ?? [])]) this.tell(w, objects.get(key));
      }
      return undefined;
    };
    const start = this.from === undefined ? undefined : { objects: [], resourceVersion: String(this.from) };
    watchUntil(this.client, { res: this.res, namespace: this.namespace }, { signal: this.signal, timeoutSeconds: this.timeoutSeconds, start }, follow).catch((err: unknown) => {
      this.failSynced(err);
      for (const set of this.waiters.values()) for (const w of [...set]) w.fail(err);
      this.onEnd(err);
    });
  }

  private tell(w: Waiter, obj: KubeObject | undefined): void {
    w.obj = obj;
    w.evaluate();
  }

  add(key: string, w: Waiter): void {
    let set = this.waiters.get(key);
    if (!set) this.waiters.set(key, (set = new Set()));
    set.add(w);
  }

  remove(key: string, w: Waiter): void {
    const set = this.waiters.get(key);
    set?.delete(w);
    if (set?.size === 0) this.waiters.delete(key);
  }
}

export interface SharedTarget {
  res: ApiResource;
  namespace?: string;
  name: string;
}

const numericVersion = (o: KubeObject | undefined): bigint | undefined => {
  const rv = o?.metadata.resourceVersion;
  return typeof rv === 'string' && /^\d+$/.test(rv) ? BigInt(rv) : undefined;
};

/** The feeds of one operation, by kind and namespace. */
export class WatchHub {
  private readonly feeds = new Map<string, Feed>();
  private readonly stop = new AbortController();
  /** One abort listener per caller's signal, however many waits it has here. */
  private readonly aborts = new Map<AbortSignal, Set<() => void>>();
  /** By resource (`<group>/<plural>`), the latest version of an object its feeds delivered. */
  private readonly latest = new Map<string, bigint>();

  constructor(
    private readonly client: KubeClient,
    private readonly timeoutSeconds?: number,
  ) {
    // Each feed's connection listens on it.
    setMaxListeners(0, this.stop.signal);
  }

  /** The listed feed of a kind and namespace, or (`from`) one that watches from a version without listing. */
  private feed(res: ApiResource, namespace: string | undefined, from?: bigint): Feed {
    const key = `${res.group}/${res.version}/${res.plural}|${namespace ?? ''}|${from === undefined ? 'listed' : 'from'}`;
    let feed = this.feeds.get(key);
    if (!feed || (from !== undefined && !feed.canJoin(from))) {
      const made: Feed = new Feed(
        this.client,
        res,
        namespace,
        this.stop.signal,
        this.timeoutSeconds,
        () => {
          // A feed that failed is forgotten: the next wait on its kind starts a new one.
          if (this.feeds.get(key) === made) this.feeds.delete(key);
        },
        (rv) => {
          const kind = resourceKey(res);
          if (rv !== undefined && rv > (this.latest.get(kind) ?? -1n)) this.latest.set(kind, rv);
        },
        from,
      );
      feed = made;
      this.feeds.set(key, feed);
    }
    return feed;
  }

  /** The objects of a kind in a namespace as the shared watch knows them now (listing it first if nobody follows it yet). */
  async objects(res: ApiResource, namespace: string | undefined, signal: AbortSignal): Promise<KubeObject[]> {
    const feed = this.feed(res, namespace);
    await this.untilAborted(feed.synced, signal);
    return [...feed.state.values()];
  }

  /** One object as the shared watch knows it now; undefined when it does not exist. */
  async current(target: SharedTarget, signal: AbortSignal): Promise<KubeObject | undefined> {
    const feed = this.feed(target.res, target.namespace);
    await this.untilAborted(feed.synced, signal);
    return feed.state.get(`${target.namespace ?? ''}/${target.name}`);
  }

  /**
   * Waits until `check` returns a value for the object `target` names, as
   * watchUntil does for one object, but on the kind's shared watch. `start`
   * is the object as a write answered it: when it already satisfies the
   * check no watch is opened; otherwise the wait joins the watch that
   * follows the kind from the writes' versions (no list). Without `start`,
   * the kind is listed once and followed.
   */
  async until<T>(target: SharedTarget, opts: { signal: AbortSignal; start?: KubeObject }, check: WatchCheck<T>): Promise<T> {
    const { signal } = opts;
    const key = `${target.namespace ?? ''}/${target.name}`;
    const view = (obj: KubeObject | undefined) => new Map(obj ? [[key, obj]] : []);
    const start = opts.start && withKind(target.res, opts.start);
    if (start) {
      const first = check(view(start), start);
      if (first !== undefined) return first;
    }
    if (signal.aborted) throw abortError(signal);
    const from = numericVersion(start);
    const feed = this.feed(target.res, target.namespace, from);
    if (from === undefined) await this.untilAborted(feed.synced, signal);
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const known = from === undefined ? feed.state.get(key) : undefined;
      const waiter: Waiter = {
        obj: start && (!known || !laterThan(known, start)) ? start : known,
        evaluate: () => {
          if (settled) return;
          try {
            const r = check(view(waiter.obj), waiter.obj);
            if (r !== undefined) finish(() => resolve(r));
          } catch (err) {
            finish(() => reject(err));
          }
        },
        fail: (err) => finish(() => reject(signal.aborted ? abortError(signal) : err)),
      };
      const finish = (settle: () => void) => {
        if (settled) return;
        settled = true;
        feed.remove(key, waiter);
        off();
        settle();
      };
      const off = this.onAbort(signal, () => finish(() => reject(abortError(signal))));
      feed.add(key, waiter);
      // The start object was judged already; a listed feed may know a later version.
      if (!start || waiter.obj !== start) waiter.evaluate();
    });
  }

  /** Calls `fn` when `signal` aborts; returns the way to stop listening. */
  private onAbort(signal: AbortSignal, fn: () => void): () => void {
    let set = this.aborts.get(signal);
    if (!set) {
      const fns = new Set<() => void>();
      set = fns;
      this.aborts.set(signal, fns);
      signal.addEventListener('abort', () => [...fns].forEach((f) => f()), { once: true });
    }
    set.add(fn);
    return () => set.delete(fn);
  }

  private untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
    if (signal.aborted) return Promise.reject(abortError(signal));
    return new Promise<T>((resolve, reject) => {
      const off = this.onAbort(signal, () => reject(abortError(signal)));
      p.then(
        (v) => {
          off();
          resolve(v);
        },
        (err: unknown) => {
          off();
          reject(err);
        },
      );
    });
  }

  /**
   * By resource (`<group>/<plural>`), the latest resourceVersion of an object
   * its feeds delivered: what the server's watch cache of that resource had
   * reached when it told the state these waits ended on. Only the resource's
   * own: the API server keeps a cache a resource, each at its own version.
   */
  seenVersions(): ReadonlyMap<string, bigint> {
    return this.latest;
  }

  /** Ends every feed. */
  close(): void {
    this.stop.abort();
    this.feeds.clear();
  }
}
