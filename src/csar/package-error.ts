/**
 * The error the package reader throws (or a member stream emits) when a
 * package cannot be read safely. It carries findings, so a validator can
 * report them beside the others instead of stopping at a stack trace.
 */
import { ValidationError } from '../errors.js';
import type { Finding } from '../model/package-files.js';

export class PackageError extends ValidationError {
  readonly findings: Finding[];

  constructor(findings: Finding | Finding[]) {
    const list = Array.isArray(findings) ? findings : [findings];
    const first = list[0];
    if (!first) throw new TypeError('PackageError needs at least one finding');
    const more = list.length > 1 ? ` (and ${list.length - 1} more finding${list.length > 2 ? 's' : ''})` : '';
    super(first.file ?? 'package', undefined, `${first.message}${more}`, { hint: first.hint });
    this.findings = list;
  }

  /** The code of the first finding, for callers that only branch on one. */
  get code(): string {
    return this.findings[0]!.code;
  }
}

/** Turns whatever a member stream or parser threw into findings about `file`. */
export function findingsFromError(err: unknown, file: string): Finding[] {
  if (err instanceof PackageError) return err.findings;
  const message = err instanceof Error ? err.message : String(err);
  return [{ severity: 'error', code: 'read-failed', file, message: `cannot read ${file}: ${message}` }];
}
