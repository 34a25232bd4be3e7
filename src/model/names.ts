/**
 * The names vnfm lets an operator give: what a VIM, a package and a VNF
 * instance may be called. One set of rules for every path that sets a name
 * (the commands, a modify request, an import document, a Tacker script's
 * output), so a name the store holds is one a command could have given.
 */

export type NameKind = 'vim' | 'package' | 'instance';

/**
 * Characters no name may hold, nor anything offered to a shell: C0 and C1
 * controls and DEL (a terminal acts on them), the bidirectional controls
 * (they reorder what a terminal shows), line and paragraph separators, and
 * lone surrogates (no character at all).
 */
const UNPRINTABLE = /[\p{Cc}\p{Bidi_Control}\u2028\u2029]|\p{Cs}/u;

/** Whether the text holds a character no name may hold (UNPRINTABLE). */
export function hasUnprintable(text: string): boolean {
  return UNPRINTABLE.test(text);
}

/** Package and instance names: letters, digits, ".", "_" and "-", as a file name or a Kubernetes label would take them. */
const TOKEN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

const HINTS: Record<NameKind, string> = {
  // VIM names come from Tacker's vim-config files and its `openstack vim register`, which take any text.
  vim: 'use 1-255 printable characters without leading or trailing spaces, e.g. vim-k8s',
  package: 'use letters, digits, ".", "_" and "-" (at most 128), starting with a letter or digit',
  instance: 'use letters, digits, ".", "_" and "-" (at most 128), starting with a letter or digit',
};

/** Undefined when `name` can name a `kind`; otherwise the hint a refusal gives. */
export function nameProblem(kind: NameKind, name: unknown): string | undefined {
  if (typeof name !== 'string') return HINTS[kind];
  const ok = kind === 'vim' ? name.length >= 1 && name.length <= 255 && !hasUnprintable(name) && name.trim() === name : TOKEN_NAME.test(name);
  return ok ? undefined : HINTS[kind];
}
