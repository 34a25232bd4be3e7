/**
 * `TOSCA-Metadata/TOSCA.meta` (SOL004 §4.2): a first block of package keys,
 * then `Name:` blocks about single files, with `Content-Type:` and
 * optionally `Algorithm:`/`Hash:`. Parsing is pure; whether the named files
 * exist is checked in check-structure.
 */
import type { Finding } from '../model/package-files.js';
import { isHexDigest, parseAlgorithm } from './hashes.js';
import { checkMemberName } from './member-name.js';
import { parseKeyValue, readListedName, splitLines } from './meta-text.js';

export const TOSCA_META_PATH = 'TOSCA-Metadata/TOSCA.meta';

/** One `Name:` block. Line numbers are 1-based, in TOSCA.meta. */
export interface ToscaMetaEntry {
  /** As written. */
  name: string;
  /** As a member path (`./a` → `a`); undefined for a URL. */
  path?: string;
  contentType?: string;
  algorithm?: string;
  hash?: string;
  line: number;
  algorithmLine?: number;
  hashLine?: number;
  /** The block's last line, after which a missing `Algorithm:`/`Hash:` is written. */
  lastLine: number;
}

/** What TOSCA.meta says, with member paths normalised. */
export interface ToscaMeta {
  file: string;
  fileVersion?: string;
  csarVersion?: string;
  createdBy?: string;
  /** The top VNFD, as a member path. */
  entryDefinitions?: string;
  /** The SOL004 manifest (`.mf`), as a member path. */
  entryManifest?: string;
  entryChangeLog?: string;
  entryLicenses?: string;
  entryCertificate?: string;
  /** Every key of the first block as written, with its line. */
  header: Record<string, { value: string; line: number }>;
  entries: ToscaMetaEntry[];
}

type HeaderField = 'fileVersion' | 'csarVersion' | 'createdBy' | 'entryDefinitions' | 'entryManifest' | 'entryChangeLog' | 'entryLicenses' | 'entryCertificate';

const HEADER_KEYS: Record<string, { field: HeaderField; spelling: string; path?: boolean }> = {
  'tosca-meta-file-version': { field: 'fileVersion', spelling: 'TOSCA-Meta-File-Version' },
  // The OASIS CSAR 1.0 spelling, still found in older packages.
  'tosca-meta-version': { field: 'fileVersion', spelling: 'TOSCA-Meta-Version' },
  'csar-version': { field: 'csarVersion', spelling: 'CSAR-Version' },
  'created-by': { field: 'createdBy', spelling: 'Created-By' },
  'entry-definitions': { field: 'entryDefinitions', spelling: 'Entry-Definitions', path: true },
  'etsi-entry-manifest': { field: 'entryManifest', spelling: 'ETSI-Entry-Manifest', path: true },
  'etsi-entry-change-log': { field: 'entryChangeLog', spelling: 'ETSI-Entry-Change-Log', path: true },
  'etsi-entry-licenses': { field: 'entryLicenses', spelling: 'ETSI-Entry-Licenses', path: true },
  'etsi-entry-certificate': { field: 'entryCertificate', spelling: 'ETSI-Entry-Certificate', path: true },
};

export function parseToscaMeta(text: string, file = TOSCA_META_PATH): { meta: ToscaMeta; findings: Finding[] } {
  const findings: Finding[] = [];
  const meta: ToscaMeta = { file, header: {}, entries: [] };
  const lines = splitLines(text);
  const err = (code: string, line: number, message: string, hint?: string, severity: Finding['severity'] = 'error'): void => {
    findings.push({ severity, code, file, line, message, hint });
  };

  let inHeader = true;
  let current: ToscaMetaEntry | undefined;
  let orphan = false;
  let last: { set: (v: string) => void; get: () => string } | undefined;
  lines.forEach((raw, i) => {
    const n = i + 1;
    if (raw.trim() === '') {
      if (Object.keys(meta.header).length > 0) inHeader = false;
      current = undefined;
      orphan = false;
      last = undefined;
      return;
    }
    // Manifest-style continuation: one leading space continues the previous value.
    if (raw.startsWith(' ') && last) {
      last.set(last.get() + raw.slice(1).trimEnd());
      return;
    }
    const kv = parseKeyValue(raw);
    if (!kv) {
      err(
        'tosca-meta-syntax',
        n,
        `line ${n} is not a "Key: value" line: ${JSON.stringify(raw.slice(0, 80))}`,
        'write one "Key: value" per line, blocks separated by an empty line',
      );
      return;
    }
    const key = kv.key.toLowerCase();
    if (key === 'name') {
      inHeader = false;
      orphan = false;
      current = { name: kv.value, line: n, lastLine: n };
      meta.entries.push(current);
      const entry = current;
      last = { set: (v) => (entry.name = v), get: () => entry.name };
      return;
    }
    if (inHeader) {
      const known = HEADER_KEYS[key];
      if (meta.header[kv.key] || (known && meta[known.field] !== undefined)) {
        err('tosca-meta-duplicate-key', n, `${kv.key} appears twice in the first block`, 'keep one');
        return;
      }
      meta.header[kv.key] = { value: kv.value, line: n };
      const h = meta.header[kv.key]!;
      last = { set: (v) => (h.value = v), get: () => h.value };
      if (known) {
        meta[known.field] = kv.value;
        last = {
          set: (v) => {
            h.value = v;
            meta[known.field] = v;
          },
          get: () => h.value,
        };
        if (kv.key !== known.spelling && key !== 'created-by') {
          err('tosca-meta-key-case', n, `${kv.key} is spelt ${known.spelling} in SOL004`, `write ${known.spelling}: Tacker reads keys case-sensitively`, 'warning');
        }
      }
      return;
    }
    if (!current) {
      if (!orphan) err('artifact-block-incomplete', n, `the block at line ${n} has no Name: line`, 'start each file block with Name: <path in the package>');
      orphan = true;
      return;
    }
    current.lastLine = n;
    const entry = current;
    switch (key) {
      case 'content-type':
        if (entry.contentType !== undefined) err('tosca-meta-duplicate-key', n, `Content-Type appears twice in the block of ${entry.name}`, 'keep one');
        entry.contentType = kv.value;
        last = { set: (v) => (entry.contentType = v), get: () => entry.contentType ?? '' };
        break;
      case 'algorithm':
        if (entry.algorithm !== undefined) err('tosca-meta-duplicate-key', n, `Algorithm appears twice in the block of ${entry.name}`, 'keep one');
        entry.algorithm = kv.value;
        entry.algorithmLine = n;
        last = { set: (v) => (entry.algorithm = v), get: () => entry.algorithm ?? '' };
        break;
      case 'hash':
        if (entry.hash !== undefined) err('tosca-meta-duplicate-key', n, `Hash appears twice in the block of ${entry.name}`, 'keep one');
        entry.hash = kv.value;
        entry.hashLine = n;
        last = { set: (v) => (entry.hash = v), get: () => entry.hash ?? '' };
        break;
      default:
        last = undefined;
        err('tosca-meta-unknown-key', n, `${kv.key} is not a key of a TOSCA.meta file block`, 'file blocks hold Name, Content-Type, Algorithm and Hash', 'warning');
    }
  });

  checkHeader(meta, file, findings);
  for (const e of meta.entries) checkEntry(e, file, findings);
  return { meta, findings };
}

function checkHeader(meta: ToscaMeta, file: string, findings: Finding[]): void {
  const lineOf = (field: HeaderField): number | undefined => Object.entries(meta.header).find(([k]) => HEADER_KEYS[k.toLowerCase()]?.field === field)?.[1].line;
  if (!meta.entryDefinitions) {
    findings.push({
      severity: 'error',
      code: 'tosca-meta-missing-key',
      file,
      line: meta.entryDefinitions === '' ? lineOf('entryDefinitions') : 1,
      message: `${file} has no Entry-Definitions, so the top VNFD is unknown`,
      hint: 'add a line such as "Entry-Definitions: Definitions/vnfd_top.yaml" to the first block',
    });
  }
  // SOL004 requires these three; Tacker's samples and parser do without them, so they only warn.
  for (const [field, spelling, example] of [
    ['fileVersion', 'TOSCA-Meta-File-Version', '1.0'],
    ['csarVersion', 'CSAR-Version', '1.1'],
    ['createdBy', 'Created-By', 'your name or organisation'],
  ] as const) {
    if (!meta[field]) {
      findings.push({
        severity: 'warning',
        code: 'tosca-meta-missing-key',
        file,
        line: 1,
        message: `${file} has no ${spelling}`,
        hint: `add "${spelling}: ${example}" to the first block (SOL004 requires it)`,
      });
    }
  }
  if (meta.fileVersion && meta.fileVersion !== '1.0') {
    findings.push({
      severity: 'warning',
      code: 'tosca-meta-version',
      file,
      line: lineOf('fileVersion'),
      message: `TOSCA-Meta-File-Version is ${meta.fileVersion}; SOL004 packages use 1.0`,
      hint: 'write TOSCA-Meta-File-Version: 1.0',
    });
  }
  if (meta.csarVersion && !['1.0', '1.1'].includes(meta.csarVersion)) {
    findings.push({
      severity: 'warning',
      code: 'tosca-meta-version',
      file,
      line: lineOf('csarVersion'),
      message: `CSAR-Version is ${meta.csarVersion}; SOL004 packages use 1.1`,
      hint: 'write CSAR-Version: 1.1',
    });
  }
  for (const spec of Object.values(HEADER_KEYS)) {
    if (!spec.path) continue;
    const value = meta[spec.field];
    if (value === undefined || value === '') continue;
    const check = checkMemberName(value);
    if (check.finding || !check.path) {
      findings.push({
        severity: 'error',
        code: 'zip-slip',
        file,
        line: lineOf(spec.field),
        message: `${spec.spelling} ${JSON.stringify(value)} points outside the package`,
        hint: 'give a path relative to the package root, without ".."',
      });
      meta[spec.field] = undefined;
      continue;
    }
    meta[spec.field] = check.path;
  }
  if (meta.entryManifest && !meta.entryManifest.toLowerCase().endsWith('.mf')) {
    findings.push({
      severity: 'error',
      code: 'manifest-name',
      file,
      line: lineOf('entryManifest'),
      message: `ETSI-Entry-Manifest ${meta.entryManifest} does not end in .mf`,
      hint: 'name the manifest file <something>.mf (SOL004), as Tacker requires',
    });
  }
}

function checkEntry(e: ToscaMetaEntry, file: string, findings: Finding[]): void {
  const add = (code: string, line: number, message: string, hint: string): void => {
    findings.push({ severity: 'error', code, file, line, message, hint });
  };
  const listed = readListedName(e.name, 'Name');
  if (listed.kind === 'refused') {
    add(listed.code, e.line, listed.message, listed.hint);
    return;
  }
  e.path = listed.kind === 'url' ? undefined : listed.path;
  const hasAlg = e.algorithm !== undefined && e.algorithm !== '';
  const hasHash = e.hash !== undefined && e.hash !== '';
  const alg = hasAlg ? parseAlgorithm(e.algorithm!) : undefined;
  if (hasAlg && !alg) {
    add(
      'hash-algorithm-unsupported',
      e.algorithmLine!,
      `Algorithm ${e.algorithm} of ${e.name} is not SHA-224, SHA-256, SHA-384 or SHA-512`,
      'write one of SHA-224, SHA-256, SHA-384, SHA-512',
    );
    return;
  }
  if (e.algorithm !== undefined || e.hash !== undefined) {
    if (!hasAlg || !hasHash) {
      add(
        'artifact-block-incomplete',
        e.hashLine ?? e.algorithmLine ?? e.line,
        `the block of ${e.name} has ${hasAlg ? 'an Algorithm but no Hash' : hasHash ? 'a Hash but no Algorithm' : 'empty Algorithm and Hash'}`,
        'give both Algorithm and Hash (vnfm vnfpkg-build fills them in), or neither',
      );
      return;
    }
  }
  if (alg && !isHexDigest(alg, e.hash!)) {
    add('hash-malformed', e.hashLine!, `Hash of ${e.name} is not a ${e.algorithm} hex digest`, 'rebuild the package with vnfm vnfpkg-build to compute it');
  }
}
