/**
 * What vnfm reads back from its caches under VNFM_HOME/cache (compiled code,
 * parsed manifests) is not checked otherwise, so it is read only from a real
 * directory or file of this user that no one else can write.
 */
import { lstatSync } from 'node:fs';

export function trustedCachePath(path: string, isDir: boolean): boolean {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st || (isDir ? !st.isDirectory() : !st.isFile())) return false;
  return (typeof process.getuid !== 'function' || st.uid === process.getuid()) && (st.mode & 0o022) === 0;
}
