/**
 * The SOL004 manifest (`*.mf`): a `metadata:` block about the package, then
 * `Source:`/`Algorithm:`/`Hash:` blocks about files (or URLs of external
 * artifacts), optionally `non_mano_artifact_sets:` and a CMS signature.
 * Parsing is pure; the files and hashes are checked in check-structure.
 */
import type { Finding } from '../model/package-files.js';
import { isHexDigest, parseAlgorithm } from './hashes.js';
import { type KeyValue, memberPath, parseKeyValue, readListedName, splitLines } from './meta-text.js';

/** One `Source:` block. Lines are 1-based, in the manifest. */
export interface ManifestArtifact {
  /** As written. */
  source: string;
  /** As a member path; undefined for an external artifact (a URL). */
  path?: string;
  /** A URL: vnfm does not fetch it, so its hash is not checked. */
  external: boolean;
  algorithm?: string;
  hash?: string;
  signature?: string;
  certificate?: string;
  line: number;
  algorithmLine?: number;
  hashLine?: number;
  lastLine: number;
}

export interface Manifest {
  file: string;
  /** `vnf_provider_id`, `vnf_product_name`, `vnf_release_date_time`, `vnf_package_version`, ... as written. */
  metadata: Record<string, string>;
  metadataLine?: number;
  artifacts: ManifestArtifact[];
  /** `non_mano_artifact_sets`: set name → member paths. */
  nonManoArtifactSets: Record<string, { path: string; line: number }[]>;
  /** Whether the manifest carries a CMS signature (not verified here). */
  signed: boolean;
}

/** The metadata keys SOL004 asks of a VNF package manifest. */
export const MANIFEST_METADATA_KEYS = ['vnf_provider_id', 'vnf_product_name', 'vnf_release_date_time', 'vnf_package_version'] as const;

/** Keys that start or belong to a block other than metadata. */
const BLOCK_KEYS = new Set(['source', 'algorithm', 'hash', 'signature', 'certificate', 'metadata', 'non_mano_artifact_sets']);

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$/;

export function parseManifest(text: string, file: string): { manifest: Manifest; findings: Finding[] } {
  const findings: Finding[] = [];
  const manifest: Manifest = { file, metadata: {}, artifacts: [], nonManoArtifactSets: {}, signed: false };
  const add = (code: string, line: number | undefined, message: string, hint?: string, severity: Finding['severity'] = 'error'): void => {
    findings.push({ severity, code, file, line, message, hint });
  };

  type Mode = 'top' | 'metadata' | 'non-mano' | 'cms';
  let mode: Mode = 'top';
  let current: ManifestArtifact | undefined;
  let nonManoSet: string | undefined;
  let orphanReported = false;
  let metadataColumnZeroNoted = false;
  const lines = splitLines(text);
  lines.forEach((raw, i) => {
    const n = i + 1;
    if (mode === 'cms') {
      if (/^-----END CMS-----\s*$/.test(raw)) mode = 'top';
      return;
    }
    if (/^-----BEGIN CMS-----\s*$/.test(raw)) {
      manifest.signed = true;
      mode = 'cms';
      current = undefined;
      return;
    }
    if (raw.trim() === '') {
      if (mode === 'metadata') mode = 'top';
      current = undefined;
      orphanReported = false;
      return;
    }
    if (raw.trimStart().startsWith('#')) return;
    const indented = /^\s/.test(raw);
    const kv = parseKeyValue(raw.trim());
    if (indented && mode === 'metadata') {
      if (!kv) {
        add('manifest-syntax', n, `line ${n} of the metadata block is not "key: value"`, 'write "  key: value" lines under metadata:');
        return;
      }
      if (kv.key in manifest.metadata) add('manifest-duplicate-key', n, `metadata key ${kv.key} appears twice`, 'keep one', 'warning');
      manifest.metadata[kv.key] = kv.value;
      return;
    }
    // SOL004's own examples write the metadata keys at column 0 under "metadata:"; Tacker reads only
    // the Source/Algorithm/Hash blocks (tacker/common/csar_utils.py, _convert_artifacts), so it accepts that.
    if (!indented && mode === 'metadata' && kv && !BLOCK_KEYS.has(kv.key.toLowerCase())) {
      if (!metadataColumnZeroNoted) {
        metadataColumnZeroNoted = true;
        add(
          'manifest-metadata-unindented',
          n,
          `the metadata keys from line ${n} are written at column 0, as in SOL004's examples; read as the metadata block`,
          'indent them by two spaces ("  vnf_provider_id: ...") for tools that parse the manifest as YAML',
          'info',
        );
      }
      if (kv.key in manifest.metadata) add('manifest-duplicate-key', n, `metadata key ${kv.key} appears twice`, 'keep one', 'warning');
      manifest.metadata[kv.key] = kv.value;
      return;
    }
    if (indented && mode === 'non-mano') {
      if (kv && kv.value === '') {
        nonManoSet = kv.key;
        manifest.nonManoArtifactSets[nonManoSet] ??= [];
      } else if (kv && kv.key.toLowerCase() === 'source' && nonManoSet) {
        manifest.nonManoArtifactSets[nonManoSet]!.push({ path: memberPath(kv.value), line: n });
      }
      return;
    }
    if (indented) {
      add('manifest-syntax', n, `line ${n} is indented outside the metadata or non_mano_artifact_sets block`, 'remove the indentation, or put the line in its block');
      return;
    }
    if (!kv) {
      add('manifest-syntax', n, `line ${n} is not a "Key: value" line: ${JSON.stringify(raw.slice(0, 80))}`, 'write one "Key: value" per line, blocks separated by an empty line');
      return;
    }
    const key = kv.key.toLowerCase();
    if (key === 'metadata' && kv.value === '') {
      if (manifest.metadataLine !== undefined) add('manifest-duplicate-key', n, 'metadata: appears twice', 'keep one metadata block');
      manifest.metadataLine ??= n;
      mode = 'metadata';
      current = undefined;
      return;
    }
    if (key === 'non_mano_artifact_sets' && kv.value === '') {
      mode = 'non-mano';
      current = undefined;
      return;
    }
    mode = 'top';
    if (key === 'source') {
      current = { source: kv.value, external: false, line: n, lastLine: n };
      manifest.artifacts.push(current);
      return;
    }
    if (!current) {
      if (!orphanReported) add('artifact-block-incomplete', n, `${kv.key}: at line ${n} is not in a Source: block`, 'start each file block with Source: <path in the package>');
      orphanReported = true;
      return;
    }
    current.lastLine = n;
    readBlockKey(current, kv, n, add);
  });

  checkMetadata(manifest, file, findings);
  for (const a of manifest.artifacts) checkArtifact(a, file, findings);
  if (manifest.signed) {
    add(
      'manifest-signature-not-verified',
      undefined,
      `${file} carries a CMS signature, which vnfm does not verify`,
      'verify it with openssl cms -verify if you rely on it',
      'info',
    );
  }
  return { manifest, findings };
}

type AddFinding = (code: string, line: number | undefined, message: string, hint?: string, severity?: Finding['severity']) => void;

/** One "Key: value" line of a Source: block (Algorithm, Hash, Signature, Certificate), a repeated one noted. */
function readBlockKey(current: ManifestArtifact, kv: KeyValue, n: number, add: AddFinding): void {
  const dup = (): void => add('manifest-duplicate-key', n, `${kv.key} appears twice in the block of ${current.source}`, 'keep one');
  switch (kv.key.toLowerCase()) {
    case 'algorithm':
      if (current.algorithm !== undefined) dup();
      current.algorithm = kv.value;
      current.algorithmLine = n;
      break;
    case 'hash':
      if (current.hash !== undefined) dup();
      current.hash = kv.value;
      current.hashLine = n;
      break;
    case 'signature':
      current.signature = kv.value;
      break;
    case 'certificate':
      current.certificate = kv.value;
      break;
    default:
      add(
        'manifest-unknown-key',
        n,
        `${kv.key} is not a key of a manifest file block`,
        'file blocks hold Source, Algorithm and Hash (and optionally Signature, Certificate)',
        'warning',
      );
  }
}

function checkMetadata(m: Manifest, file: string, findings: Finding[]): void {
  if (m.metadataLine === undefined) {
    findings.push({
      severity: 'warning',
      code: 'manifest-metadata-missing',
      file,
      line: 1,
      message: `${file} has no metadata: block`,
      hint: `start the manifest with "metadata:" and indented ${MANIFEST_METADATA_KEYS.join(', ')}`,
    });
    return;
  }
  const missing = MANIFEST_METADATA_KEYS.filter((k) => !m.metadata[k]);
  if (missing.length > 0) {
    findings.push({
      severity: 'warning',
      code: 'manifest-metadata-missing',
      file,
      line: m.metadataLine,
      message: `the metadata block of ${file} lacks ${missing.join(', ')}`,
      hint: 'SOL004 asks for each of them: add them under metadata:',
    });
  }
  const when = m.metadata.vnf_release_date_time;
  if (when && (!RFC3339.test(when) || Number.isNaN(Date.parse(when)))) {
    findings.push({
      severity: 'warning',
      code: 'manifest-metadata-invalid',
      file,
      line: m.metadataLine,
      message: `vnf_release_date_time ${JSON.stringify(when)} is not an RFC 3339 date-time`,
      hint: 'write it like 2024-05-01T12:00:00+00:00',
    });
  }
}

function checkArtifact(a: ManifestArtifact, file: string, findings: Finding[]): void {
  const add = (code: string, line: number, message: string, hint: string, severity: Finding['severity'] = 'error'): void => {
    findings.push({ severity, code, file, line, message, hint });
  };
  const listed = readListedName(a.source, 'Source');
  if (listed.kind === 'refused') {
    add(listed.code, a.line, listed.message, listed.hint);
    return;
  }
  if (listed.kind === 'url') a.external = true;
  else a.path = listed.path;
  const hasAlg = !!a.algorithm;
  const hasHash = !!a.hash;
  const alg = hasAlg ? parseAlgorithm(a.algorithm!) : undefined;
  if (hasAlg && !alg) {
    add(
      'hash-algorithm-unsupported',
      a.algorithmLine!,
      `Algorithm ${a.algorithm} of ${a.source} is not SHA-224, SHA-256, SHA-384 or SHA-512`,
      'write one of SHA-224, SHA-256, SHA-384, SHA-512',
    );
    return;
  }
  if (!hasAlg || !hasHash) {
    if (a.algorithm === undefined && a.hash === undefined) {
      add('hash-missing', a.line, `the block of ${a.source} has no Algorithm and Hash`, 'SOL004 asks for a hash of every listed file: vnfm vnfpkg-build fills them in', 'warning');
    } else {
      add(
        'artifact-block-incomplete',
        a.hashLine ?? a.algorithmLine ?? a.line,
        `the block of ${a.source} has ${hasAlg ? 'an Algorithm but no Hash' : hasHash ? 'a Hash but no Algorithm' : 'empty Algorithm and Hash'}`,
        'give Source, Algorithm and Hash together, as Tacker requires (vnfm vnfpkg-build fills them in)',
      );
    }
    return;
  }
  if (!isHexDigest(alg!, a.hash!)) {
    add('hash-malformed', a.hashLine!, `Hash of ${a.source} is not a ${a.algorithm} hex digest`, 'rebuild the package with vnfm vnfpkg-build to compute it');
  }
}
