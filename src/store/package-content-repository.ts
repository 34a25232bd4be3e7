/**
 * Onboarded packages' CSAR zips in the shared store (PostgreSQL), so that
 * every client can run a package another client onboarded. A zip is kept in
 * chunks of about 1 MiB; neither writing nor reading ever holds more than
 * one chunk. Each chunk is its own short write (the store's write lock is
 * held for one chunk, not for a 2 GB upload); the upload is marked complete
 * in the transaction that inserts the package's record, so one that was cut
 * short is never read as a package.
 */
import { NotFoundError, VnfmError } from '../errors.js';
import type { Db } from './database.js';

/** An upload that has not moved for this long is taken for one whose writer died, and removed. */
const ABANDONED_UPLOAD_MS = 60 * 60 * 1000;

export interface PackageContentInfo {
  packageId: string;
  sizeBytes: number;
  sha256: string | undefined;
  chunkCount: number;
  complete: boolean;
}

interface ContentRow {
  package_id: string;
  size_bytes: number;
  sha256: string | null;
  chunk_count: number;
  complete: number;
}

/** The chunks of one upload, written in order; `finish` records size and hash and makes it complete with the record. */
export interface ContentUpload {
  write(chunk: Uint8Array): Promise<void>;
  /** Marks the upload complete together with `alsoInTransaction` (the package record's insert): both or neither. */
  finish(sha256: string, sizeBytes: number, alsoInTransaction?: () => Promise<void>): Promise<void>;
  /** Marks it complete inside the caller's transaction (store-import: with every row). */
  complete(sha256: string, sizeBytes: number): Promise<void>;
  /** Removes what was written (an onboarding that failed). */
  abort(): Promise<void>;
}

export class PackageContentRepository {
  constructor(
    private readonly db: Db,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Starts an upload for a package id that has no record yet. Uploads left
   * by writers that died (nothing written for an hour) are removed first.
   */
  async begin(packageId: string): Promise<ContentUpload> {
    await this.removeAbandoned();
    await this.db.prepare('INSERT INTO package_contents (package_id, updated_at) VALUES (?, ?)').run(packageId, this.now().toISOString());
    const insert = this.db.prepare('INSERT INTO package_content_chunks (package_id, seq, data) VALUES (?, ?, ?)');
    const touch = this.db.prepare('UPDATE package_contents SET chunk_count = ?, updated_at = ? WHERE package_id = ?');
    let seq = 0;
    let touchedAt = Date.now();
    const upload: ContentUpload = {
      write: async (chunk) => {
        await insert.run(packageId, seq++, chunk);
        // The heartbeat of the upload, every minute or so, not every chunk.
        if (Date.now() - touchedAt > 60_000) {
          await touch.run(seq, this.now().toISOString(), packageId);
          touchedAt = Date.now();
        }
      },
      complete: async (sha256, sizeBytes) => {
        const r = await this.db
          .prepare('UPDATE package_contents SET sha256 = ?, size_bytes = ?, chunk_count = ?, complete = 1, updated_at = ? WHERE package_id = ? AND complete = 0')
          .run(sha256, sizeBytes, seq, this.now().toISOString(), packageId);
        if (r.changes !== 1)
          throw new VnfmError(`the upload of package ${packageId}'s contents to the shared store was removed before it completed`, { hint: 'onboard the package again' });
      },
      finish: async (sha256, sizeBytes, alsoInTransaction) => {
        await this.db
          .transaction(async () => {
            await alsoInTransaction?.();
            await upload.complete(sha256, sizeBytes);
          })
          .immediate();
      },
      abort: () => this.delete(packageId),
    };
    return upload;
  }

  /** What the store holds of a package's zip; `undefined` when nothing. */
  async info(packageId: string): Promise<PackageContentInfo | undefined> {
    const r = (await this.db.prepare('SELECT package_id, size_bytes, sha256, chunk_count, complete FROM package_contents WHERE package_id = ?').get(packageId)) as
      ContentRow | undefined;
    return r && { packageId: r.package_id, sizeBytes: Number(r.size_bytes), sha256: r.sha256 ?? undefined, chunkCount: r.chunk_count, complete: r.complete === 1 };
  }

  /** The complete uploads' package ids. */
  async completeIds(): Promise<string[]> {
    return (await this.db.prepare('SELECT package_id FROM package_contents WHERE complete = 1').pluck().all()) as string[];
  }

  /** One chunk of a complete upload, as bytes. */
  async chunk(packageId: string, seq: number): Promise<Buffer> {
    const data = (await this.db.prepare('SELECT data FROM package_content_chunks WHERE package_id = ? AND seq = ?').pluck().get(packageId, seq)) as Uint8Array | undefined;
    if (!data) throw new NotFoundError(`chunk ${seq} of package ${packageId}'s contents is missing from the shared store`, { hint: 'delete the package and onboard it again' });
    return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  }

  /** Every chunk in order, one at a time. */
  async *chunks(packageId: string): AsyncGenerator<Buffer> {
    const info = await this.info(packageId);
    if (!info?.complete) return;
    for (let seq = 0; seq < info.chunkCount; seq++) yield this.chunk(packageId, seq);
  }

  async delete(packageId: string): Promise<void> {
    await this.db.prepare('DELETE FROM package_contents WHERE package_id = ?').run(packageId);
  }

  /** Deletes the zip together with what `alsoInTransaction` deletes (the package's record): both or neither. */
  async deleteWith(packageId: string, alsoInTransaction: () => Promise<void>): Promise<void> {
    await this.db
      .transaction(async () => {
        await alsoInTransaction();
        await this.delete(packageId);
      })
      .immediate();
  }

  /** Removes uploads that never completed and have not moved for an hour (their writer died). */
  async removeAbandoned(): Promise<number> {
    const before = new Date(this.now().getTime() - ABANDONED_UPLOAD_MS).toISOString();
    return (await this.db.prepare('DELETE FROM package_contents WHERE complete = 0 AND updated_at < ?').run(before)).changes;
  }
}
