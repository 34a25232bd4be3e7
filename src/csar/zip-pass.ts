/**
 * One sequential reading of a whole zip that serves both the member streams
 * validation asks for and a tap that sees every byte of the file, in order
 * (onboarding hashes the package with it): the package is read once.
 *
 * The members to be streamed are planned first, in file order. The pass
 * reads the file from its first byte to its last in large chunks; each
 * chunk goes to the tap, and the part of it that is a planned member's
 * data is pushed to that member's stream once the stream is asked for
 * (the pass waits at a member's first byte for it). Members asked for
 * after the pass went by them, or never planned, are read by position as
 * before. A member whose stream is refused before it is attached (a bad
 * local header) is dropped from the plan, so the pass never waits for it.
 */
import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';

/** Receives every byte of a file, in order, as a pass reads it. */
export interface FileTap {
  /**
   * One chunk, valid during the call only (a member's stream may hand its
   * memory to another thread right after): a tap copies what it keeps.
   * Resolves when the next may come.
   */
  write(chunk: Buffer): Promise<void>;
}

/** A planned member: where its (compressed) data lies, and its stream once asked for. */
interface Planned {
  start: number;
  end: number;
  stream?: FedStream;
  attached: Promise<FedStream | null>;
  attach: (s: FedStream | null) => void;
}

const CHUNK = 4 * 1024 * 1024;

/** A member's raw bytes as the pass pushes them; `wake` is called when its reader wants more. */
class FedStream extends Readable {
  wake: (() => void) | undefined;
  constructor() {
    super({ highWaterMark: CHUNK });
    this.once('close', () => this.wake?.());
  }
  override _read(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
  /** Pushes `chunk`; resolves when the reader wants more (or is gone). */
  async feed(chunk: Buffer): Promise<void> {
    if (this.destroyed) return;
    if (this.push(chunk)) return;
    await new Promise<void>((resolve) => {
      this.wake = resolve;
    });
  }
}

export class FilePass {
  private readonly planned = new Map<string, Planned>();
  private order: Planned[] = [];
  /** Where planned members' data begin and end, ascending: chunks end there, so a member's chunks are whole buffers. */
  private bounds: number[] = [];
  private running: Promise<void> | undefined;
  /** No more members will be attached: the pass no longer waits for any. */
  private finishing = false;
  private stopped = false;

  constructor(
    private readonly fh: FileHandle,
    private readonly fileSize: number,
    private readonly tap: FileTap,
  ) {}

  /** Plans the members' data ranges (sorted by start) and starts reading. Once only. */
  start(members: { path: string; start: number; end: number }[]): void {
    if (this.running) return;
    for (const m of [...members].sort((a, b) => a.start - b.start)) {
      let attach!: (s: FedStream | null) => void;
      const attached = new Promise<FedStream | null>((resolve) => (attach = resolve));
      const p: Planned = { start: m.start, end: m.end, attached, attach };
      this.planned.set(m.path, p);
      this.order.push(p);
    }
    this.bounds = [...new Set(this.order.flatMap((p) => [p.start, p.end]))].sort((a, b) => a - b);
    this.running = this.run();
    // Its failure is reported by finish() (and to the member streams it was feeding).
    this.running.catch(() => undefined);
  }

  get started(): boolean {
    return this.running !== undefined;
  }

  /** The raw bytes of a planned member the pass has not reached yet, as a stream it feeds; undefined otherwise. */
  take(path: string): Readable | undefined {
    const p = this.planned.get(path);
    if (!p || p.stream || this.finishing) return undefined;
    this.planned.delete(path);
    p.stream = new FedStream();
    p.attach(p.stream);
    return p.stream;
  }

  /** A planned member that will not be streamed after all (refused before its data was read). */
  drop(path: string): void {
    const p = this.planned.get(path);
    if (!p) return;
    this.planned.delete(path);
    p.attach(null);
  }

  /** Reads the rest of the file through the tap, attaching no more members; rejects if the reading failed. */
  async finish(): Promise<void> {
    this.finishing = true;
    for (const p of this.planned.values()) p.attach(null);
    this.planned.clear();
    if (!this.running) this.start([]);
    await this.running;
  }

  /** Stops reading (the package is closed): member streams still fed end with an error. */
  async abort(): Promise<void> {
    this.stopped = true;
    await this.finish().catch(() => undefined);
  }

  private async readChunk(pos: number): Promise<Buffer> {
    const bound = this.bounds.find((b) => b > pos) ?? this.fileSize;
    const n = Math.min(CHUNK, bound - pos, this.fileSize - pos);
    // A buffer of its own: a member's hashing thread takes it over whole, without a copy.
    const buf = Buffer.allocUnsafeSlow(n);
    let done = 0;
    while (done < n) {
      const { bytesRead } = await this.fh.read(buf, done, n - done, pos + done);
      if (bytesRead === 0) throw new Error(`unexpected end of file at byte ${pos + done} of ${this.fileSize}`);
      done += bytesRead;
    }
    return buf;
  }

  /** Feeds `p` its part of the chunk at `pos..end`; true when its data ends there. */
  private async deliver(p: Planned, buf: Buffer, pos: number, end: number): Promise<boolean> {
    const from = Math.max(p.start, pos) - pos;
    const to = Math.min(p.end, end) - pos;
    if (to > from) await p.stream!.feed(buf.subarray(from, to));
    if (p.end > end) return false;
    if (!p.stream!.destroyed) p.stream!.push(null);
    return true;
  }

  private async run(): Promise<void> {
    const active: Planned[] = [];
    let next = 0;
    try {
      let pos = 0;
      let reading: Promise<Buffer> | undefined = this.fileSize > 0 ? this.readChunk(0) : undefined;
      while (reading) {
        const buf = await reading;
        if (this.stopped) throw new Error('the package was closed while it was being read');
        const end = pos + buf.length;
        // The next chunk is read while this one is hashed and delivered.
        reading = end < this.fileSize ? this.readChunk(end) : undefined;
        reading?.catch(() => undefined);
        const tapped = this.tap.write(buf);
        // Members already being fed (they began in an earlier chunk), then those beginning in this one, in
        // file order: each is fed before the next is waited for, so a reader busy with one frees its place.
        for (let i = 0; i < active.length;) {
          const p = active[i]!;
          if (await this.deliver(p, buf, pos, end)) active.splice(i, 1);
          else i++;
        }
        while (next < this.order.length && this.order[next]!.start < end) {
          const p = this.order[next++]!;
          if (!p.stream && !this.finishing) await p.attached;
          if (p.stream && !(await this.deliver(p, buf, pos, end))) active.push(p);
        }
        await tapped;
        pos = end;
      }
    } catch (err) {
      for (const p of [...active, ...this.order.slice(next)]) p.stream?.destroy(err as Error);
      throw err;
    }
  }
}
