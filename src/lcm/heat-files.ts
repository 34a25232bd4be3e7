/**
 * The files a Heat stack is made of: the package's Base HOT for a flavour
 * (the first YAML of `BaseHOT/<flavour>/` and every file of its `nested/`),
 * or, for a flavour the package has none for, the HOT made from the VNFD
 * (heat-translate.ts); and Heat environments as `openstack stack create -e`
 * takes them, with the provider templates their `resource_registry` names,
 * read relative to the environment file. The environments an instance was
 * created with are kept under VNFM_HOME (`instances/<id>/heat/`) for its
 * later updates.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import yaml from 'js-yaml';
import { echo, UsageError, ValidationError, VnfmError } from '../errors.js';
import { FileReadError, readInputText } from '../input-file.js';
import type { HeatTemplates } from '../infra/openstack/driver-contract.js';
import { openStoredZip } from '../csar/index.js';
import { isUuid } from '../model/ids.js';
import type { PackageFiles } from '../model/package-files.js';
import type { Flavour } from '../vnfd/index.js';
import { hotText, translateFlavour, type TranslatedHot, type TranslateOptions } from './heat-translate.js';

/** Heat environments read from disk, ready to merge into a stack's files. */
export interface HeatEnvironments {
  /** The files as given (absolute), in merge order. */
  paths: string[];
  files: Record<string, string>;
  environmentFiles: string[];
  sources: Record<string, string>;
}

export const NO_ENVIRONMENTS: HeatEnvironments = { paths: [], files: {}, environmentFiles: [], sources: {} };

const YAML_FILE = /\.(ya?ml)$/i;
const TEMPLATE_FILE = /\.(ya?ml|template)$/i;
/** Provider templates may use further templates; a chain this deep is a loop. */
const MAX_DEPTH = 8;

/**
 * What a stack of the flavour is made from: the package's Base HOT, or when
 * it has none for the flavour, the HOT made from the VNFD as Tacker v1 makes
 * it (ValidationError, exit 2, naming what of the VNFD stands in the way).
 */
export async function readStackTemplates(packagePath: string, flavour: Flavour, source: string, packageId: string, vnfdId?: string): Promise<HeatTemplates> {
  const files = await openStoredZip(packagePath);
  try {
    return (await findBaseHot(files, flavour.id)) ?? generatedTemplates(flavour, packageId, vnfdId ? { vnfdId } : {}, source).templates;
  } finally {
    await files.close();
  }
}

/** The package path vnfm names for a generated HOT, in Heat's errors and the instance's record. */
export const generatedPath = (flavour: Flavour) => `${flavour.file} (HOT generated for flavour ${flavour.id})`;

/**
 * A flavour's generated HOT as a stack's files, and what it leaves out of
 * the VNFD. When it cannot be made: UsageError (exit 2), a ValidationError of
 * `source`'s flavourId when the flavour comes from a request.
 */
export function generatedTemplates(flavour: Flavour, packageId: string, opts: TranslateOptions = {}, source?: string): { templates: HeatTemplates; notes: string[] } {
  let hot: TranslatedHot;
  try {
    hot = translateFlavour(flavour, opts);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    const problem = `package ${packageId} has no Base HOT for flavour "${flavour.id}" (BaseHOT/${flavour.id}/), and ${err.message}`;
    const details = err.hint ? { hint: err.hint } : {};
    throw source === undefined ? new UsageError(problem, details) : new ValidationError(source, 'flavourId', problem, details);
  }
  const templatePath = generatedPath(flavour);
  const files = Object.fromEntries(Object.entries(hot.files).map(([name, t]) => [name, hotText(t)]));
  const sources = Object.fromEntries(Object.keys(hot.files).map((name) => [name, `${templatePath}, nested ${name}`]));
  return { templates: { templatePath, template: hotText(hot.template), files, environmentFiles: [], sources }, notes: hot.notes };
}

/** The Base HOT of a flavour in the package; undefined when BaseHOT/<flavour>/ holds no YAML. */
export async function findBaseHot(files: PackageFiles, flavourId: string): Promise<HeatTemplates | undefined> {
  const dir = `BaseHOT/${flavourId}/`;
  const inDir = (prefix: string) =>
    files
      .list()
      .filter((p) => p.startsWith(prefix) && !p.slice(prefix.length).includes('/'))
      .map((p) => p.slice(prefix.length))
      .sort();
  const top = inDir(dir).filter((name) => YAML_FILE.test(name));
  if (top.length === 0) return undefined;
  const templatePath = `${dir}${top[0]}`;
  const files_: Record<string, string> = {};
  const sources: Record<string, string> = {};
  for (const name of inDir(`${dir}nested/`)) {
    const path = `${dir}nested/${name}`;
    files_[name] = await files.readText(path, files.size(path));
    sources[name] = path;
  }
  return { templatePath, template: await files.readText(templatePath, files.size(templatePath)), files: files_, environmentFiles: [], sources };
}

/** The Base HOT with the environments added to its files; a name both use is refused. */
export function withEnvironments(hot: HeatTemplates, envs: HeatEnvironments): HeatTemplates {
  for (const key of Object.keys(envs.files)) {
    if (hot.files[key] !== undefined && hot.files[key] !== envs.files[key]) {
      throw new UsageError(`the Heat environment file ${envs.sources[key]} names "${key}", which is also the nested template ${hot.sources[key]} of the package`, {
        hint: 'rename the provider template (and its entry in resource_registry)',
      });
    }
  }
  return {
    ...hot,
    files: { ...hot.files, ...envs.files },
    environmentFiles: envs.environmentFiles,
    sources: { ...hot.sources, ...envs.sources },
  };
}

/**
 * Reads environment files in order. Each is sent under its own name in
 * `files` and listed in `environment_files`; every template its
 * `resource_registry` names (and the templates those use) is sent under
 * the name the registry writes, as Heat looks it up by that name.
 */
export async function readHeatEnvironments(paths: string[], baseDir: string): Promise<HeatEnvironments> {
  const out: HeatEnvironments = { paths: [], files: {}, environmentFiles: [], sources: {} };
  const put = (key: string, text: string, from: string) => {
    if (out.files[key] !== undefined && out.files[key] !== text) {
      throw new UsageError(`two different files are named "${key}" in the Heat environments: ${out.sources[key]} and ${from}`, {
        hint: 'give the provider templates distinct names in resource_registry',
      });
    }
    out.files[key] = text;
    out.sources[key] = from;
  };
  for (const [i, given] of paths.entries()) {
    const path = isAbsolute(given) ? given : resolve(baseDir, given);
    const text = await readText(path, 'Heat environment file');
    const env = parseYaml(path, text);
    if (env !== null && env !== undefined && (typeof env !== 'object' || Array.isArray(env))) {
      throw new ValidationError(path, undefined, 'is not a Heat environment (a mapping with resource_registry, parameters, parameter_defaults...)');
    }
    const key = `env-${i + 1}-${basename(path)}`;
    put(key, text, path);
    out.paths.push(path);
    out.environmentFiles.push(key);
    const registry = (env as { resource_registry?: unknown } | null)?.resource_registry;
    for (const name of templateNames(registry)) await addTemplate(name, dirname(path), path, 0);
  }
  return out;

  async function addTemplate(name: string, dir: string, namedIn: string, depth: number): Promise<void> {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(name) && !name.startsWith('file://')) return; // fetched by Heat itself
    if (depth > MAX_DEPTH)
      throw new UsageError(`provider templates nest more than ${MAX_DEPTH} deep at ${name} (named in ${namedIn})`, { hint: 'check for templates that use each other' });
    const file = name.startsWith('file://') ? new URL(name).pathname : isAbsolute(name) ? name : resolve(dir, name);
    if (out.files[name] !== undefined && out.sources[name] === file) return;
    const text = await readText(file, `provider template named in ${namedIn}`);
    put(name, text, file);
    const template = parseYaml(file, text) as { resources?: Record<string, { type?: unknown }> } | null;
    for (const r of Object.values(template?.resources ?? {})) {
      if (typeof r?.type === 'string' && TEMPLATE_FILE.test(r.type)) await addTemplate(r.type, dirname(file), file, depth + 1);
    }
  }
}

/** Values of a resource_registry (at any depth: `resources: {name: {type: file}}`) that are template files. */
function templateNames(registry: unknown): string[] {
  if (!registry || typeof registry !== 'object') return [];
  return Object.values(registry as Record<string, unknown>).flatMap((v) =>
    typeof v === 'string' ? (TEMPLATE_FILE.test(v) ? [v] : []) : typeof v === 'object' ? templateNames(v) : [],
  );
}

/** Largest environment or provider template read (Heat's own default limit is 512 KiB). */
const MAX_TEMPLATE_BYTES = 4 * 1024 * 1024;

async function readText(path: string, what: string): Promise<string> {
  try {
    return readInputText(path, MAX_TEMPLATE_BYTES);
  } catch (err) {
    if (!(err instanceof FileReadError)) throw err;
    throw new UsageError(`cannot read the ${what} ${path}: it ${err.problem}`, {
      hint: 'give the path of an existing file (relative paths in resource_registry are read relative to the environment file)',
    });
  }
}

function parseYaml(path: string, text: string): unknown {
  try {
    return yaml.load(text, { schema: yaml.JSON_SCHEMA });
  } catch (err) {
    throw new ValidationError(path, undefined, `is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
}

/** An instance's folder under VNFM_HOME, made only of an id of vnfm's own form (the store may hold a row something else wrote). */
function instanceDir(home: string, instanceId: string): string {
  if (!isUuid(instanceId)) {
    throw new VnfmError(`vnf instance id ${echo(instanceId)} is not a UUID: refusing to make a path of it (nothing was read, written or removed)`, {
      hint: 'vnfm never makes such an id: the record was written by something else',
    });
  }
  return join(home, 'instances', instanceId);
}

const heatDir = (home: string, instanceId: string) => join(instanceDir(home, instanceId), 'heat');

/** Keeps the environments an instance's stack was made with. */
export async function saveInstanceEnvironments(home: string, instanceId: string, envs: HeatEnvironments): Promise<void> {
  const dir = heatDir(home, instanceId);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(join(dir, 'environments.json'), JSON.stringify(envs, null, 2), { mode: 0o600 });
}

/** The environments kept for an instance; none when it was created without. */
export async function loadInstanceEnvironments(home: string, instanceId: string): Promise<HeatEnvironments> {
  const file = join(heatDir(home, instanceId), 'environments.json');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    // Only a file that is not there means "created without"; one that cannot be read would silently drop the environments.
    if (isAbsent(err)) return NO_ENVIRONMENTS;
    throw new VnfmError(`the Heat environments kept for vnf instance ${instanceId} cannot be read: ${file}: ${(err as Error).message}`, {
      hint: `make ${file} a file vnfm may read (or give the environments again with --heat-environment)`,
      cause: err,
    });
  }
  try {
    return JSON.parse(text) as HeatEnvironments;
  } catch {
    throw new VnfmError(`the Heat environments kept for vnf instance ${instanceId} under ${heatDir(home, instanceId)} cannot be read`, {
      hint: 'give the environments again with --heat-environment',
    });
  }
}

/** A read that failed because nothing is at the path (as opposed to a file that is there but cannot be read). */
export function isAbsent(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

export async function dropInstanceEnvironments(home: string, instanceId: string): Promise<void> {
  await rm(instanceDir(home, instanceId), { recursive: true, force: true });
}
