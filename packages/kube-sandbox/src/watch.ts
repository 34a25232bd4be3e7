/**
 * Watches: a chunked stream of `{"type": ..., "object": ...}` lines, one per
 * change, as the API server's watch cache serves them.
 *
 * - No resourceVersion (or "0"): the current objects as ADDED, then changes.
 * - A resourceVersion: the changes after it, from a bounded history of
 *   recent events. One older than the history is answered, as by the real
 *   watch cache, with a 200 stream holding a single ERROR event whose
 *   Status is 410 `Expired` ("too old resource version"). The history
 *   starts when the sandbox has finished booting, as a watch cache starts
 *   at the revision the server came up with; that of a kind served later (a
 *   CRD's) starts when it is served.
 * - Selectors apply to both the old and the new state: an object that stops
 *   matching is sent as DELETED (carrying its previous state, at the new
 *   resourceVersion), one that starts matching as ADDED.
 * - `allowWatchBookmarks`: BOOKMARK events carrying only the current
 *   resourceVersion, at an interval; with `sendInitialEvents=true` also one
 *   annotated `k8s.io/initial-events-end` after the initial ADDED events.
 * - `timeoutSeconds` ends the stream; without it the stream ends after 30
 *   minutes, within the real server's randomised 30–60.
 */
import type { ServerResponse } from 'node:http';
import type { KubeObject } from './resources.js';
import { withTypeMeta, type WatchRequest } from './rest.js';
import { expired } from './status.js';
import type { ObjectStore, StoreEvent } from './store.js';
import { toTable } from './table.js';

export interface WatchOptions {
  /** Events kept for watches that resume from a resourceVersion (default 10000). */
  historyLimit?: number;
  /** How often a watch that allows bookmarks gets one (default 60 s, as the API server). */
  bookmarkIntervalMs?: number;
}

interface Watcher {
  request: WatchRequest;
  send(type: string, obj: KubeObject): void;
  close(abrupt?: boolean): void;
}

const DEFAULT_TIMEOUT_SECONDS = 1800;
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

export class WatchHub {
  private readonly history: StoreEvent[] = [];
  /** A watch may resume from this resourceVersion or any later one. */
  private floor = 0;
  /** Later floors of kinds served after the start (`group/plural`): their history starts when they are. */
  private readonly typeFloors = new Map<string, number>();
  private readonly watchers = new Set<Watcher>();
  private readonly unsubscribe: () => void;
  private readonly historyLimit: number;
  private readonly bookmarkIntervalMs: number;

  constructor(
    private readonly store: ObjectStore,
    private readonly now: () => Date,
    opts: WatchOptions = {},
  ) {
    this.historyLimit = opts.historyLimit ?? 10_000;
    this.bookmarkIntervalMs = opts.bookmarkIntervalMs ?? 60_000;
    this.unsubscribe = store.subscribe((event) => this.onEvent(event));
  }

  /** Forgets the history so far: watches may resume only from the current resourceVersion on. */
  startHistoryHere(): void {
    this.history.length = 0;
    this.floor = Number(this.store.currentResourceVersion());
  }

  /** The kind `group/plural` is (newly) served: watches of it may resume only from now on. */
  startTypeHistory(group: string, plural: string): void {
    this.typeFloors.set(`${group}/${plural}`, Number(this.store.currentResourceVersion()));
  }

  private onEvent(event: StoreEvent): void {
    this.history.push(event);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.shift()!;
      this.floor = Number(dropped.object.metadata.resourceVersion);
    }
    for (const w of this.watchers) deliver(w, event);
  }

  /** Streams one watch onto `res` until it times out, the client goes, or the sandbox drops it. */
  serve(res: ServerResponse, request: WatchRequest): void {
    const contentType = request.table ? `application/json;as=Table;v=${request.table};g=meta.k8s.io` : 'application/json';
    res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();

    let first = true;
    // The events of one turn of the event loop (a controller's pass over its queue, the initial list) leave
    // together: one TLS record and one system call for the lot, not one for each event.
    let corked = false;
    const uncork = (): void => {
      corked = false;
      res.uncork();
    };
    const write = (type: string, object: unknown): void => {
      if (res.writableEnded) return;
      if (!corked) {
        corked = true;
        res.cork();
        process.nextTick(uncork);
      }
      res.write(`${JSON.stringify({ type, object })}\n`);
    };
    const timers: NodeJS.Timeout[] = [];
    const watcher: Watcher = {
      request,
      send: (type, obj) => {
        if (type === 'BOOKMARK' || !request.table) {
          write(type, type === 'BOOKMARK' ? obj : withTypeMeta(request.type, obj));
          return;
        }
        const table = toTable(request.type, [obj], obj.metadata.resourceVersion ?? '', this.now(), request.table) as { columnDefinitions?: unknown };
        // Like the API server, only the first event of a table watch carries the column definitions.
        if (!first) table.columnDefinitions = [];
        first = false;
        write(type, table);
      },
      close: (abrupt = false) => {
        for (const t of timers) clearTimeout(t);
        this.watchers.delete(watcher);
        if (abrupt) res.destroy();
        else if (!res.writableEnded) res.end();
      },
    };
    res.on('close', () => watcher.close());

    const rv = request.resourceVersion;
    if (rv !== '' && rv !== '0') {
      const n = Number(rv);
      if (!Number.isInteger(n) || n < 0) {
        write('ERROR', expired(`invalid resource version: ${rv}`).status);
        res.end();
        return;
      }
      const floor = Math.max(this.floor, this.typeFloors.get(`${request.type.group}/${request.type.plural}`) ?? 0);
      if (n < floor) {
        write('ERROR', expired(`too old resource version: ${n} (${floor + 1})`).status);
        res.end();
        return;
      }
      for (const event of this.history) if (Number(event.object.metadata.resourceVersion) > n) deliver(watcher, event);
    } else if (request.sendInitialEvents !== false) {
      const { items } = this.store.scan(request.type.group, request.type.plural, request.namespace);
      for (const obj of items) if (request.matches(obj)) watcher.send('ADDED', obj);
    }
    if (request.allowBookmarks && request.sendInitialEvents) {
      this.sendBookmark(watcher, true);
    }
    this.watchers.add(watcher);
    if (request.allowBookmarks) {
      const tick = (): void => {
        this.sendBookmark(watcher, false);
        timers[0] = setTimeout(tick, this.bookmarkIntervalMs);
      };
      timers[0] = setTimeout(tick, this.bookmarkIntervalMs);
    }
    timers.push(setTimeout(() => watcher.close(), (request.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000));
  }

  private sendBookmark(w: Watcher, initialEventsEnd: boolean): void {
    const metadata: Record<string, unknown> = { resourceVersion: this.store.currentResourceVersion() };
    if (initialEventsEnd) metadata.annotations = { [INITIAL_EVENTS_END]: 'true' };
    const t = w.request.type;
    w.send('BOOKMARK', { kind: t.kind, apiVersion: t.group ? `${t.group}/${t.version}` : t.version, metadata } as unknown as KubeObject);
  }

  /** Open watch streams. */
  count(): number {
    return this.watchers.size;
  }

  /**
   * Ends every open watch, as a restarting API server would (`abrupt`: as a
   * broken connection would, without the end of the chunked stream); returns how many.
   */
  dropAll(abrupt = false): number {
    const n = this.watchers.size;
    for (const w of [...this.watchers]) w.close(abrupt);
    return n;
  }

  stop(): void {
    this.unsubscribe();
    this.dropAll();
  }
}

function deliver(w: Watcher, event: StoreEvent): void {
  const r = w.request;
  if (event.group !== r.type.group || event.resource !== r.type.plural) return;
  if (r.namespace !== undefined && event.object.metadata.namespace !== r.namespace) return;
  const now = r.matches(event.object);
  if (event.type === 'MODIFIED' && event.old) {
    const before = r.matches(event.old);
    if (now && before) w.send('MODIFIED', event.object);
    else if (now) w.send('ADDED', event.object);
    // Leaving the selection: the object as the watcher last saw it, at the version of the change.
    else if (before) w.send('DELETED', { ...event.old, metadata: { ...event.old.metadata, resourceVersion: event.object.metadata.resourceVersion } });
    return;
  }
  if (now) w.send(event.type, event.object);
}
