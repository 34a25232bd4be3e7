/**
 * The package-level checks of a CSAR: TOSCA.meta, the manifest, the files
 * they name and every declared hash. The VNFD itself is the vnfd room's.
 */
import type { Finding, PackageFiles } from '../model/package-files.js';
import { type HashDeclaration, parseAlgorithm, verifyHashes } from './hashes.js';
import { type Manifest, parseManifest } from './manifest.js';
import { openFindings } from './package-reader.js';
import { findingsFromError } from './package-error.js';
import { TOSCA_META_PATH, type ToscaMeta, parseToscaMeta } from './tosca-meta.js';

export interface CheckStructureOptions {
  /** Leave the hashes of image files unchecked, as Tacker does (each gets an info finding). */
  skipImageHashes?: boolean;
  /** Members streamed at once while hashing. */
  concurrency?: number;
  /**
   * Also read through members no hash covers, so that a damaged or hostile
   * member (CRC, size, bomb) is found now rather than when it is used.
   * Default true.
   */
  readAllMembers?: boolean;
  /**
   * Leave the members unread: the caller adds its own declarations (the
   * VNFD's image checksums) and calls `verifyPackageHashes` once with all of
   * them, so that no member is read twice.
   */
  deferHashes?: boolean;
}

export interface CsarStructure {
  meta?: ToscaMeta;
  manifest?: Manifest;
  /** Every finding, those the reader gathered while opening the package first. */
  findings: Finding[];
  /** The hashes TOSCA.meta and the manifest declare, of members the package has. */
  declarations: HashDeclaration[];
}

export async function checkCsarStructure(files: PackageFiles, opts: CheckStructureOptions = {}): Promise<CsarStructure> {
  const findings: Finding[] = openFindings(files);
  const declarations: HashDeclaration[] = [];
  const result: CsarStructure = { findings, declarations };

  if (!files.has(TOSCA_META_PATH)) {
    findings.push(await missingToscaMeta(files));
    if (!opts.deferHashes) findings.push(...(await verifyPackageHashes(files, [], opts)));
    return result;
  }
  let metaText: string;
  try {
    metaText = await files.readText(TOSCA_META_PATH);
  } catch (err) {
    findings.push(...findingsFromError(err, TOSCA_META_PATH));
    return result;
  }
  const parsedMeta = parseToscaMeta(metaText, TOSCA_META_PATH);
  const meta = parsedMeta.meta;
  result.meta = meta;
  findings.push(...parsedMeta.findings);

  if (meta.entryDefinitions && !files.has(meta.entryDefinitions)) {
    findings.push({
      severity: 'error',
      code: 'entry-definitions-missing',
      file: TOSCA_META_PATH,
      line: metaLine(meta, 'Entry-Definitions'),
      message: `Entry-Definitions names ${meta.entryDefinitions}, which is not in the package`,
      hint: suggest(files, meta.entryDefinitions, 'correct Entry-Definitions to the path of the top VNFD'),
    });
  } else if (meta.entryDefinitions && !/\.ya?ml$/i.test(meta.entryDefinitions)) {
    findings.push({
      severity: 'warning',
      code: 'entry-definitions-not-yaml',
      file: TOSCA_META_PATH,
      line: metaLine(meta, 'Entry-Definitions'),
      message: `Entry-Definitions ${meta.entryDefinitions} is not a .yaml file`,
      hint: 'point Entry-Definitions at the top VNFD, a TOSCA YAML file',
    });
  }
  for (const [key, path] of [
    ['ETSI-Entry-Change-Log', meta.entryChangeLog],
    ['ETSI-Entry-Licenses', meta.entryLicenses],
    ['ETSI-Entry-Certificate', meta.entryCertificate],
  ] as const) {
    // Licenses is usually a folder; the others are files.
    if (path && !files.has(path) && !files.list().some((p) => p.startsWith(`${path}/`))) {
      findings.push({
        severity: 'error',
        code: 'entry-file-missing',
        file: TOSCA_META_PATH,
        line: metaLine(meta, key),
        message: `${key} names ${path}, which is not in the package`,
        hint: `add ${path} to the package, or remove the ${key} line`,
      });
    }
  }

  for (const e of meta.entries) {
    if (e.path) declareListed(files, { ...e, path: e.path }, TOSCA_META_PATH, findings, declarations);
  }

  await checkManifest(files, meta, result, declarations);

  if (!opts.deferHashes) findings.push(...(await verifyPackageHashes(files, declarations, opts)));
  return result;
}

/**
 * The manifest TOSCA.meta names: read, its artifacts' hashes added to
 * `declarations`, the files it lists checked; or, when none is named, a
 * warning for a stray .mf at the root.
 */
async function checkManifest(files: PackageFiles, meta: ToscaMeta, result: CsarStructure, declarations: HashDeclaration[]): Promise<void> {
  const findings = result.findings;
  if (meta.entryManifest) {
    const mf = meta.entryManifest;
    if (!files.has(mf)) {
      findings.push({
        severity: 'error',
        code: 'manifest-missing',
        file: TOSCA_META_PATH,
        line: metaLine(meta, 'ETSI-Entry-Manifest'),
        message: `ETSI-Entry-Manifest names ${mf}, which is not in the package`,
        hint: suggest(files, mf, 'add the manifest, or correct or remove the ETSI-Entry-Manifest line'),
      });
    } else if (mf.toLowerCase().endsWith('.mf')) {
      try {
        const parsed = parseManifest(await files.readText(mf), mf);
        result.manifest = parsed.manifest;
        findings.push(...parsed.findings);
        for (const a of parsed.manifest.artifacts) {
          if (a.external) {
            findings.push({
              severity: 'info',
              code: 'external-artifact',
              file: mf,
              line: a.line,
              message: `${a.source} is an external artifact: vnfm does not fetch it, so its hash is not checked`,
              hint: 'ship the file inside the package if it must be checked offline',
            });
            continue;
          }
          if (a.path) declareListed(files, { ...a, path: a.path, name: a.source }, mf, findings, declarations);
        }
        for (const [set, members] of Object.entries(parsed.manifest.nonManoArtifactSets)) {
          for (const m of members) {
            if (!files.has(m.path)) {
              findings.push({
                ...listedMissing(mf, m.line, m.path, files),
                message: `non-MANO artifact set ${set} lists ${m.path}, which is not in the package`,
              });
            }
          }
        }
      } catch (err) {
        findings.push(...findingsFromError(err, mf));
      }
    }
  } else {
    const stray = files.list().filter((p) => !p.includes('/') && p.toLowerCase().endsWith('.mf'));
    if (stray.length > 0) {
      findings.push({
        severity: 'warning',
        code: 'manifest-not-referenced',
        file: TOSCA_META_PATH,
        message: `${stray.join(', ')} is not named by ETSI-Entry-Manifest, so its hashes are not checked`,
        hint: `add "ETSI-Entry-Manifest: ${stray[0]}" to the first block of TOSCA.meta`,
      });
    }
  }
}

/** The line of a TOSCA.meta header key, matched without regard to case. */
function metaLine(meta: ToscaMeta, key: string): number | undefined {
  return Object.entries(meta.header).find(([k]) => k.toLowerCase() === key.toLowerCase())?.[1].line;
}

/** Every declared hash checked, each member streamed once (and every other member read through, unless told not to). */
export async function verifyPackageHashes(files: PackageFiles, declarations: readonly HashDeclaration[], opts: CheckStructureOptions): Promise<Finding[]> {
  return verifyHashes(files, declarations, {
    skipImageHashes: opts.skipImageHashes,
    concurrency: opts.concurrency,
    alsoRead: opts.readAllMembers === false ? [] : files.list(),
  });
}

async function missingToscaMeta(files: PackageFiles): Promise<Finding> {
  const base: Finding = {
    severity: 'error',
    code: 'tosca-meta-missing',
    file: TOSCA_META_PATH,
    message: `the package has no ${TOSCA_META_PATH}`,
    hint: 'add TOSCA-Metadata/TOSCA.meta with TOSCA-Meta-File-Version, CSAR-Version, Created-By and Entry-Definitions: <top VNFD>',
  };
  const misplaced = files.list().find((p) => p.toLowerCase().endsWith('tosca.meta'));
  if (misplaced) return { ...base, hint: `move or rename ${misplaced} to ${TOSCA_META_PATH} (the path is case-sensitive)` };
  // SOL004 option 2: no TOSCA-Metadata, one YAML at the root whose metadata names the entry.
  const rootYaml = files.list().filter((p) => !p.includes('/') && /\.ya?ml$/i.test(p));
  for (const y of rootYaml) {
    let text = '';
    try {
      text = await files.readText(y, 1024 * 1024);
    } catch {
      continue;
    }
    if (/^\s*(entry_definition_type|template_name|tosca_definitions_version)\s*:/m.test(text)) {
      return {
        ...base,
        message: `the package follows SOL004 option 2 (a root YAML, ${y}, and no ${TOSCA_META_PATH}); vnfm, like Tacker, needs the TOSCA-Metadata directory`,
        hint: `add ${TOSCA_META_PATH} with "Entry-Definitions: ${y}" (plus TOSCA-Meta-File-Version: 1.0, CSAR-Version: 1.1, Created-By), and ETSI-Entry-Manifest for a .mf manifest`,
      };
    }
  }
  return base;
}

interface ListedFile {
  path: string;
  /** As written in the listing, for messages. */
  name: string;
  line: number;
  algorithm?: string;
  hash?: string;
  hashLine?: number;
}

/** A file TOSCA.meta or the manifest lists: missing, a finding; with a hash in a known algorithm, a declaration to verify. */
function declareListed(files: PackageFiles, listed: ListedFile, declaredIn: string, findings: Finding[], declarations: HashDeclaration[]): void {
  if (!files.has(listed.path)) {
    findings.push(listedMissing(declaredIn, listed.line, listed.name, files));
    return;
  }
  const alg = listed.algorithm ? parseAlgorithm(listed.algorithm) : undefined;
  if (alg && listed.hash) declarations.push({ path: listed.path, algorithm: alg, expected: listed.hash, declaredIn, line: listed.hashLine });
}

function listedMissing(file: string, line: number, name: string, files: PackageFiles): Finding {
  return {
    severity: 'error',
    code: 'listed-member-missing',
    file,
    line,
    message: `${file} lists ${name}, which is not in the package`,
    hint: suggest(files, name, `add ${name} to the package, or remove its block from ${file}`),
  };
}

/** A hint naming a member that differs only in case or folder, when there is one. */
function suggest(files: PackageFiles, path: string, fallback: string): string {
  const lower = path.toLowerCase();
  const base = lower.slice(lower.lastIndexOf('/') + 1);
  const near = files.list().find((p) => p.toLowerCase() === lower) ?? files.list().find((p) => p.toLowerCase().endsWith(`/${base}`) || p.toLowerCase() === base);
  return near ? `did you mean ${near}? ${fallback}` : fallback;
}
