/** vnfm's version; kept equal to package.json's by a unit test. */
export const VERSION = '0.1.0';

// Set by the bundler (scripts/bundle.mjs) from `git rev-parse HEAD`; absent when running from the sources.
declare const __VNFM_COMMIT__: string | undefined;

/** The git commit this vnfm was built from (`-dirty` if tracked files differed), or 'unknown'. */
export const BUILD_COMMIT: string = typeof __VNFM_COMMIT__ === 'string' ? __VNFM_COMMIT__ : 'unknown';

/** What `vnfm --version` prints: the version, then the commit (12 digits, `-dirty` kept) it was built from. */
export function versionLine(): string {
  const commit = /^[0-9a-f]{40}/.test(BUILD_COMMIT) ? BUILD_COMMIT.slice(0, 12) + BUILD_COMMIT.slice(40) : BUILD_COMMIT;
  return `${VERSION} (commit ${commit})`;
}
