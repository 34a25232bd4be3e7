/**
 * The private directory of one helm call: 0700, holding the kubeconfig and
 * values files (0600) and Helm's own cache/config/data homes, so Helm reads
 * nothing of the user's ~/.kube or ~/.config/helm and leaves nothing behind.
 * It is removed when the call ends, and — for a call cut short by the end of
 * the process (exit, Ctrl-C, SIGTERM, SIGHUP) — by process-end.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { atProcessEnd } from './process-end.js';

const live = new Set<string>();

function removeDir(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    // Best effort at exit: nothing more can be done from here.
  }
  live.delete(dir);
}

export interface HelmWorkdir {
  readonly path: string;
  /** Writes `name` (0600, must not exist) and returns its path. */
  write(name: string, content: string): string;
  /** Removes the directory and everything in it. */
  remove(): void;
}

export function createWorkdir(): HelmWorkdir {
  // mkdtemp makes the directory 0700.
  const path = mkdtempSync(join(tmpdir(), 'vnfm-helm-'));
  live.add(path);
  const release = atProcessEnd(() => removeDir(path));
  return {
    path,
    write(name, content) {
      const file = join(path, name);
      writeFileSync(file, content, { mode: 0o600, flag: 'wx' });
      return file;
    },
    remove() {
      removeDir(path);
      release();
    },
  };
}

/** How many private directories exist right now (for tests). */
export function liveWorkdirs(): readonly string[] {
  return [...live];
}
