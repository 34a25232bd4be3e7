/**
 * The name rules (model/names.ts) as the refusal every path that sets a
 * name gives: the commands, a modify request, an import document. The
 * repositories check them again as they write, with uniqueness, inside the
 * write transaction.
 */
import { echo, UsageError, ValidationError } from '../errors.js';
import { nameProblem, type NameKind } from '../model/names.js';

export type { NameKind } from '../model/names.js';

const LABELS: Record<NameKind, string> = { vim: 'VIM', package: 'package', instance: 'instance' };

/**
 * Throws a UsageError (exit 2) when `name` cannot name a `kind`; with `at`,
 * a ValidationError naming the file (or record) and the field it was read from.
 */
export function checkName(kind: NameKind, name: unknown, at?: { file: string; field: string }): asserts name is string {
  const hint = nameProblem(kind, name);
  if (hint === undefined) return;
  const problem = `${echo(name)} is not a usable ${LABELS[kind]} name`;
  throw at ? new ValidationError(at.file, at.field, problem, { hint }) : new UsageError(problem, { hint });
}
