/**
 * What `vnfpkg-hot` shows, offline: the Heat templates a flavour's stack is
 * made of, from a package given as a path (zip or directory) or onboarded —
 * its Base HOT, or the HOT vnfm makes from the VNFD when the package has
 * none for the flavour (or when asked to), with what of the VNFD that HOT
 * leaves out.
 */
import { resolve } from 'node:path';
import yaml from 'js-yaml';
import { openPackage, openStoredZip, PackageError, type VnfPackage } from '../csar/index.js';
import { parseToscaMeta, TOSCA_META_PATH } from '../csar/tosca-meta.js';
import { echo, NotFoundError, UsageError } from '../errors.js';
import type { HeatTemplates } from '../infra/openstack/driver-contract.js';
import type { PackageFiles } from '../model/package-files.js';
import { loadVnfd, type Vnfd } from '../vnfd/index.js';
import { assertBoundedExpansion } from '../yaml.js';
import { findBaseHot, generatedTemplates } from './heat-files.js';
import { openOnboarded, type PackageSource } from './package-content.js';

export interface PackageHotOptions {
  /** The flavour; may be left out when the VNFD has one. */
  flavourId?: string;
  /** Make the HOT from the VNFD even when the package has a Base HOT for the flavour. */
  generate?: boolean;
  /** The level whose sizes a generated HOT's scaling groups start at (the flavour's default level when absent). */
  instantiationLevelId?: string;
}

export interface PackageHot {
  /** The package as given: its path, or the onboarded package's id. */
  origin: string;
  vnfdId: string;
  flavourId: string;
  /** Made from the VNFD (the package has no Base HOT for the flavour, or one was asked for). */
  generated: boolean;
  templates: HeatTemplates;
  /** What a generated HOT leaves out of the VNFD, one line each. */
  notes: string[];
}

/**
 * The templates as data (`-o json`): each parsed as Heat reads YAML (dates
 * stay strings), or its text where it does not parse.
 */
export function hotContent(templates: Pick<HeatTemplates, 'template' | 'files' | 'templatePath'>): { template: unknown; files: Record<string, unknown> } {
  const parsed = (text: string, file: string) => {
    try {
      const doc = yaml.load(text, { schema: yaml.CORE_SCHEMA });
      assertBoundedExpansion(doc, file);
      return doc;
    } catch {
      return text;
    }
  };
  return { template: parsed(templates.template, templates.templatePath), files: Object.fromEntries(Object.entries(templates.files).map(([k, v]) => [k, parsed(v, k)])) };
}

/**
 * The templates of a flavour of the package `ref`: a path when one exists
 * there (relative to `cwd`), else an onboarded package's id, vnfdId or name
 * (the store, `deps`, is opened only then).
 */
export async function packageHot(deps: () => Promise<PackageSource>, ref: string, cwd: string, opts: PackageHotOptions): Promise<PackageHot> {
  const path = resolve(cwd, ref);
  let files: PackageFiles | undefined;
  try {
    files = await openPackage(path);
  } catch (err) {
    // Nothing at that path: the name of an onboarded package.
    if (!(err instanceof PackageError) || err.code !== 'package-not-found') throw err;
  }
  if (files) {
    try {
      return await hotOf(files, ref, await vnfdAt(files, ref), opts);
    } finally {
      await files.close();
    }
  }
  const source = await deps();
  let pkg: VnfPackage;
  try {
    pkg = await source.store.packages.get(ref);
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    throw new NotFoundError(`${path} is no file or directory, and no onboarded package has the id, vnfdId or name "${ref}"`, {
      hint: 'give the path of a .zip/.csar file or a package directory, or an onboarded package (vnfm vnfpkg-list)',
    });
  }
  const onboarded = await openOnboarded(source, pkg);
  const zip = await openStoredZip(onboarded.zip);
  try {
    return await hotOf(zip, onboarded.pkg.id, onboarded.vnfd, opts);
  } finally {
    await zip.close();
  }
}

/** The VNFD of a package read from a path; refused (exit 2) when it does not load cleanly. */
async function vnfdAt(files: PackageFiles, ref: string): Promise<Vnfd> {
  const meta = files.has(TOSCA_META_PATH) ? parseToscaMeta(await files.readText(TOSCA_META_PATH)).meta : undefined;
  const entry = meta?.entryDefinitions;
  const { vnfd, findings } = entry ? await loadVnfd(files, entry) : { vnfd: undefined, findings: [] };
  const errors = findings.filter((f) => f.severity === 'error');
  if (!vnfd || errors.length > 0) {
    const said = errors.slice(0, 3).map((f) => `${f.file ? `${f.file}: ` : ''}${f.message}`);
    throw new UsageError(`${ref} has no VNFD vnfm can read${said.length ? `: ${said.join('; ')}` : entry ? '' : ` (no Entry-Definitions in ${TOSCA_META_PATH})`}`, {
      hint: `vnfm vnfpkg-validate ${ref} lists every problem`,
    });
  }
  return vnfd;
}

async function hotOf(files: PackageFiles, origin: string, vnfd: Vnfd, opts: PackageHotOptions): Promise<PackageHot> {
  const ids = Object.keys(vnfd.flavours);
  const flavourId = opts.flavourId ?? (ids.length === 1 ? ids[0] : undefined);
  const flavour = flavourId === undefined ? undefined : vnfd.flavours[flavourId];
  if (!flavour) {
    const problem = opts.flavourId === undefined ? `VNFD ${vnfd.id} has ${ids.length} flavours: name one` : `${echo(opts.flavourId)} is not a flavour of VNFD ${vnfd.id}`;
    throw new UsageError(problem, { hint: `--flavour ${ids.join(' | ') || '(none)'}` });
  }
  if (opts.instantiationLevelId !== undefined && !flavour.instantiationLevels[opts.instantiationLevelId]) {
    throw new UsageError(`${echo(opts.instantiationLevelId)} is not an instantiation level of flavour ${flavour.id}`, {
      hint: `choose from: ${Object.keys(flavour.instantiationLevels).join(', ') || '(none)'}`,
    });
  }
  const base = opts.generate ? undefined : await findBaseHot(files, flavour.id);
  if (base) return { origin, vnfdId: vnfd.id, flavourId: flavour.id, generated: false, templates: base, notes: [] };
  const made = generatedTemplates(flavour, origin, {
    vnfdId: vnfd.id,
    ...(opts.instantiationLevelId !== undefined ? { instantiationLevelId: opts.instantiationLevelId } : {}),
  });
  return { origin, vnfdId: vnfd.id, flavourId: flavour.id, generated: true, templates: made.templates, notes: made.notes };
}
