/**
 * Which helm to run: `VNFM_HELM` when set (it must name an executable file),
 * else the first `helm` on PATH. Neither → HelmNotFoundError (exit 2), which
 * names both, before anything is recorded.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { HelmNotFoundError } from './errors.js';

export function findHelm(env: NodeJS.ProcessEnv = process.env): string {
  const chosen = env.VNFM_HELM;
  if (chosen !== undefined && chosen !== '') {
    const path = isAbsolute(chosen) ? chosen : resolve(chosen);
    if (!isExecutableFile(path)) {
      throw new HelmNotFoundError(`VNFM_HELM=${chosen} is not an executable file`, {
        hint: 'set VNFM_HELM to the path of a Helm 3 binary, or unset it to use the helm on PATH',
      });
    }
    return path;
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const path = join(dir, 'helm');
    if (isExecutableFile(path)) return isAbsolute(path) ? path : resolve(path);
  }
  throw new HelmNotFoundError('helm was not found: VNFM_HELM is not set and there is no helm on PATH', {
    hint: 'install Helm 3 (the helm binary) on PATH, or set VNFM_HELM to its path',
  });
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
