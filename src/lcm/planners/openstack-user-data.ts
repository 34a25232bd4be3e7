/**
 * A package's own LCM user-data class on an OpenStack VNF: the operator's
 * consent (the package scripts' `--allow-package-scripts` or the prompt),
 * then the class run with Tacker's contract (mgmt/user-data-class.ts) and
 * its result turned into the stack's `nfv` parameter.
 */
import { echo, UsageError, ValidationError, VnfmError } from '../../errors.js';
import type { HeatTemplates, NfvParameter } from '../../infra/openstack/driver-contract.js';
import { parseHot } from '../../infra/openstack/hot.js';
import { openStoredZip } from '../../csar/index.js';
import type { VnfInstance } from '../../model/lcm.js';
import type { LcmHook } from '../../model/vnfd.js';
import { isDeepStrictEqual } from 'node:util';
import type { Flavour } from '../../vnfd/index.js';
import type { LcmDeps, OperationOptions } from '../engine.js';
import type { NfvReads } from '../heat-nfv.js';
import { planImages, type ImagePlan } from '../heat-images.js';
import { USER_DATA, USER_DATA_CLASS, type UserDataUse } from '../user-data.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export type PackageUserData = Extract<UserDataUse, { kind: 'package-class' }>;

/**
 * Asks the operator's consent to run the class, as for a package script
 * (`hook`: the operation's start, where Tacker runs it); refuses (exit 2,
 * before anything is recorded) without it, naming the class, the file and
 * the flag.
 */
export async function consentToUserData(source: string, use: PackageUserData, packageId: string, hook: LcmHook, opts: OperationOptions): Promise<PackageUserData> {
  const consent = opts.allowPackageScripts;
  const asked = [{ hook, artifact: `user-data class ${use.className}`, file: use.file, userDataClass: use.className }];
  if (consent === true || (typeof consent === 'function' && (await consent(asked)))) return use;
  throw new UsageError(
    `${source}: additionalParams.${USER_DATA_CLASS} ${echo(use.className)} is the package's own user-data class (in ${use.file} of package ${packageId}): ` +
      "running a package's code needs the operator's consent, which was not given",
    {
      hint: `review ${use.file}, then run again with --allow-package-scripts (on a terminal vnfm asks); or remove ${USER_DATA} and ${USER_DATA_CLASS} to have vnfm build the parameters; nothing was recorded`,
    },
  );
}

/** The templates as Tacker hands them to a v1 class: the nested ones by file name, the top one as `heat_template`. */
function baseHotDict(hot: HeatTemplates): Json {
  const out: Json = {};
  for (const [name, text] of Object.entries(hot.files)) {
    if (hot.environmentFiles.includes(name)) continue;
    const doc = parseHot(text);
    if (doc) out[name] = doc;
  }
  out['heat_template'] = parseHot(hot.template) ?? {};
  return out;
}

/**
 * Runs a Tacker v1 class's `instantiate(base_hot_dict, vnfd_dict,
 * inst_req_info, grant_info)` and returns the `nfv` parameter it computed.
 * `images`: node → the Glance image vnfm made for it (Tacker's grant_info).
 */
export async function userDataNfv(
  deps: LcmDeps,
  args: {
    use: PackageUserData;
    pkg: { id: string; zip: string; workDir(): Promise<string> };
    flavour: Flavour;
    hot: HeatTemplates;
    request: unknown;
    /** The instance before the operation (a v2 class's `inst`). */
    instance: VnfInstance;
    /** The VNFCs of each VDU the instantiation makes (a v2 class's grant request). */
    replicas: Record<string, number>;
    images?: Record<string, string>;
    signal?: AbortSignal;
  },
): Promise<NfvParameter> {
  const { use, pkg } = args;
  const runner = deps.mgmt?.runUserData?.bind(deps.mgmt);
  if (!runner) throw new VnfmError(`user-data class ${use.className} in ${use.file}: this vnfm was set up without the management drivers, which run package code`);
  const files = await openStoredZip(pkg.zip);
  let vnfdDict: Json | undefined;
  try {
    vnfdDict = parseHot(await files.readText(args.flavour.file));
  } finally {
    await files.close();
  }
  const base = baseHotDict(args.hot);
  const common = { file: use.file, className: use.className, packageId: pkg.id, packageDir: await pkg.workDir(), ...(args.signal ? { signal: args.signal } : {}) };
  let result: Json;
  if (use.generation === 'v1') {
    const grantInfo = Object.fromEntries(Object.entries(args.images ?? {}).map(([node, id]) => [node, [{ resource_identifier: id, resource_type: 'image' }]]));
    result = await runner({ generation: 'v1', ...common, input: { base_hot_dict: base, vnfd_dict: vnfdDict ?? {}, inst_req_info: args.request, grant_info: grantInfo } });
  } else {
    const { heat_template: template, ...nested } = base;
    const vnfd = { vnfdId: args.instance.vnfdId, flavours: { [args.flavour.id]: { definitions: vnfdDict ?? {}, base_hot: { template, files: nested } } } };
    const fields = await runner({
      generation: 'v2',
      ...common,
      input: { operation: 'instantiate', req: args.request, inst: v2Instance(args.instance), grant_req: grantRequest(args), grant: grantOf(args.images), vnfd },
    });
    checkTemplateKept(fields, template, `user-data class ${use.className} in ${use.file} of package ${pkg.id}`);
    if (!isObject(fields['parameters'])) {
      throw new UsageError(`user-data class ${use.className} in ${use.file} of package ${pkg.id} returned no parameters (a dict), which a Tacker v2 class returns`, {
        hint: "return {'parameters': {'nfv': {...}}} (Tacker v2's contract; a v1 class returns {'nfv': ...} from instantiate(base_hot_dict, vnfd_dict, inst_req_info, grant_info))",
      });
    }
    result = fields['parameters'];
  }
  const what = `user-data class ${use.className} in ${use.file} of package ${pkg.id}`;
  const others = Object.keys(result).filter((k) => k !== 'nfv');
  if (others.length) {
    throw new UsageError(`${what} returned HOT parameters other than nfv (${others.join(', ')}), and vnfm gives the stack the nfv parameter alone`, {
      hint: 'have the class return {"nfv": {...}} only (a value the Base HOT needs can be a key under nfv, read with get_param: [nfv, ...])',
    });
  }
  const nfv = result['nfv'];
  if (!isObject(nfv)) {
    throw new UsageError(`${what} returned no nfv parameter (a dict), which the Base HOT reads`, { hint: "return {'nfv': {'VDU': {...}, 'CP': {...}}}" });
  }
  for (const key of ['VDU', 'CP'] as const) {
    if (nfv[key] !== undefined && !isObject(nfv[key])) throw new UsageError(`${what} returned nfv.${key} that is not a dict`, { hint: `nfv.${key} maps each ${key} to its keys` });
  }
  return { ...nfv, VDU: (nfv['VDU'] as NfvParameter['VDU'] | undefined) ?? {}, CP: (nfv['CP'] as NfvParameter['CP'] | undefined) ?? {} };
}

/** A change of package naming the package's own class: refused (vnfm runs one at instantiation only). */
export function classAtInstantiationOnly(source: string, use: PackageUserData, packageId: string): ValidationError {
  return new ValidationError(
    source,
    `additionalParams.${USER_DATA}`,
    `names the package's own user-data class ${use.className} (${use.file} of package ${packageId}), which vnfm runs at instantiation only`,
    {
      hint: `remove ${USER_DATA} and ${USER_DATA_CLASS}: vnfm then builds the new package's nfv parameter from its VNFD and the request; nothing was recorded`,
    },
  );
}

/** What an instantiation gets from the package's class: the images to make, and the nfv parameter (now, or once the images are made). */
export interface ClassNfvPlan {
  images: ImagePlan;
  /** Computed while planning (no image to make first): a failure then records nothing. */
  nfv?: NfvParameter;
  /** The nfv parameter to send, given the images made (the class runs then when it has not yet: they are its grant_info). */
  after(images: Record<string, string>): Promise<NfvParameter>;
}

/**
 * Plans the instantiation's nfv parameter by the package's class: the
 * package's images the templates read are made first, as vnfm does for its
 * own parameters (an image the class may set itself is not refused); with
 * none to make, the class runs now.
 */
export async function planClassNfv(
  deps: LcmDeps,
  args: Omit<Parameters<typeof userDataNfv>[1], 'images' | 'pkg' | 'signal'> & {
    pkg: { pkg: { id: string }; zip: string; workDir(): Promise<string> };
    reads: NfvReads;
    overrides: Json | undefined;
  },
  signal?: AbortSignal,
): Promise<ClassNfvPlan> {
  const pkg = { id: args.pkg.pkg.id, zip: args.pkg.zip, workDir: () => args.pkg.workDir() };
  let images: ImagePlan;
  try {
    images = planImages(args.flavour, args.reads, args.overrides, pkg.id, args.hot.templatePath);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    images = { uploads: [], notices: [] };
  }
  const run = (ids?: Record<string, string>) => userDataNfv(deps, { ...args, pkg, ...(ids ? { images: ids } : {}), ...(signal ? { signal } : {}) });
  if (images.uploads.length) return { images, after: (ids) => run(ids) };
  const nfv = await run();
  return { images, nfv, after: async () => nfv };
}

/** The instance as a Tacker v2 class's `inst` reads it: its identity and state (no VIM credentials). */
function v2Instance(instance: VnfInstance): Json {
  const keep = [
    'id',
    'vnfInstanceName',
    'vnfInstanceDescription',
    'vnfdId',
    'vnfProvider',
    'vnfProductName',
    'vnfSoftwareVersion',
    'vnfdVersion',
    'vnfPkgId',
    'instantiationState',
    'metadata',
    'extensions',
  ] as const;
  const src = instance as unknown as Json;
  return Object.fromEntries(keep.filter((k) => src[k] !== undefined).map((k) => [k, src[k]]));
}

/** The GrantRequest Tacker v2 would have sent for the instantiation: a COMPUTE per VNFC and a STORAGE per its virtual storage (vnfm grants itself). */
function grantRequest(args: { instance: VnfInstance; flavour: Flavour; replicas: Record<string, number> }): Json {
  const addResources: Json[] = [];
  for (const [vduId, vdu] of Object.entries(args.flavour.vdus)) {
    for (let i = 0; i < (args.replicas[vduId] ?? 0); i++) {
      addResources.push({ id: `${vduId}-${i}`, type: 'COMPUTE', resourceTemplateId: vduId });
      for (const storage of vdu.requirements.virtualStorage) addResources.push({ id: `${storage}-${i}`, type: 'STORAGE', resourceTemplateId: storage });
    }
  }
  return { vnfInstanceId: args.instance.id, vnfdId: args.instance.vnfdId, flavourId: args.flavour.id, operation: 'INSTANTIATE', isAutomaticInvocation: false, addResources };
}

/** A v2 class may hand the template back (DefaultUserData does, as YAML): vnfm takes its parameters only, so one that changed the template is refused. */
function checkTemplateKept(fields: Json, template: unknown, what: string): void {
  const given = fields['template'];
  if (given === undefined) return;
  const parsed = typeof given === 'string' ? parseHot(given) : given;
  if (isDeepStrictEqual(parsed, template)) return;
  throw new UsageError(`${what} returned a template that is not the package's Base HOT, and vnfm takes only the parameters from a user-data class`, {
    hint: "have the class return the Base HOT unchanged (or no template) with its parameters; for a resource per VNFC, use Tacker's StandardUserData, which vnfm serves natively",
  });
}

/** The Grant a Tacker v2 class reads: the images vnfm made, as an NFVO's vimAssets would name them (vnfm grants itself: nothing else). */
function grantOf(images: Record<string, string> | undefined): Json {
  const made = Object.entries(images ?? {});
  return made.length ? { vimAssets: { softwareImages: made.map(([node, id]) => ({ vnfdSoftwareImageId: node, vimSoftwareImageId: id })) } } : {};
}
