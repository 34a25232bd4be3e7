/**
 * Tacker's LCM user data: `additionalParams.lcm-operation-user-data` (a
 * Python file of the package) and `lcm-operation-user-data-class` (a class
 * in it) ask Tacker to compute the Heat stack's parameters with that class
 * (v1: tacker/vnfm/lcm_user_data; v2: sol_refactored's userdata_*.py).
 *
 * vnfm makes the stack's parameters itself, from the VNFD and the request,
 * and so serves natively the three classes whose result that is:
 * - Tacker v2's DefaultUserData (userdata_default.py, as packages ship it),
 *   the class Tacker v2 itself uses when a request names none (heat-nfv.ts);
 * - Tacker v2's StandardUserData (userdata_standard.py, as packages ship
 *   it): one resource per VNFC, `<VDU>-<index>`, and their parameters
 *   (heat-standard.ts);
 * - Tacker v1's sample user data (lcm_user_data.py), whose `instantiate`
 *   returns `create_final_param_dict` over `create_initial_param_dict`,
 *   `create_vdu_flavor_dict`, `create_vdu_image_dict` and
 *   `create_cpd_vl_dict`, and nothing else (heat-nfv.ts).
 * A class is recognised by its name and by its file's content, never by the
 * name alone. Every other class is the package's own code: it is run, with
 * Tacker's contract, under the package scripts' isolation once the operator
 * consented (planners/openstack-user-data.ts, mgmt/user-data-class.ts); a
 * file the package lacks is refused before anything is recorded.
 */
import { openStoredZip } from '../csar/index.js';
import { echo, ValidationError } from '../errors.js';

export const USER_DATA = 'lcm-operation-user-data';
export const USER_DATA_CLASS = 'lcm-operation-user-data-class';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The package member a `lcm-operation-user-data` path names, as Tacker joins it to the package root ('./' and '/' leading). */
export function userDataMember(path: string): string {
  return path
    .split('/')
    .filter((part) => part !== '' && part !== '.')
    .join('/');
}

/** The user-data classes vnfm serves natively. */
export type NativeUserData = 'tacker-v2-default' | 'tacker-v1-sample' | 'tacker-v2-standard';

/** What a request's user data is: a class vnfm serves natively, or the package's own, to be run. */
export type UserDataUse =
  | { kind: NativeUserData; notice: string }
  | {
      kind: 'package-class';
      /** Tacker v1's contract (lcm_user_data) or v2's (sol_refactored userdata_utils). */
      generation: 'v1' | 'v2';
      /** The package member. */
      file: string;
      className: string;
      notice: string;
    };

/** v2 when the file builds on sol_refactored's userdata_utils or its methods take tmp_csar_dir, else v1. */
function generationOf(code: string): 'v1' | 'v2' {
  return code.includes('tacker.sol_refactored') || /\ndef\w+\([^)]*tmp_csar_dir[^)]*\):/.test(code) ? 'v2' : 'v1';
}

/** The code of a Python file without comments, blank space and line continuations. */
function compact(python: string): string {
  return python
    .split('\n')
    .map((line) => line.replace(/#.*$/, ''))
    .join('\n')
    .replace(/\\\n/g, '')
    .replace(/[ \t]+/g, '');
}

/** The calls Tacker v2's DefaultUserData makes (userdata_default.py `instantiate`). */
const DEFAULT_V2_CALLS = [
  'userdata_utils.get_vnfd(',
  'userdata_utils.init_nfv_dict(',
  'userdata_utils.get_param_flavor(',
  'userdata_utils.get_param_image(',
  'userdata_utils.get_param_zone(',
  'userdata_utils.get_param_capacity(',
  'userdata_utils.get_param_network(',
  'userdata_utils.get_param_fixed_ips(',
  'inst_utils.json_merge_patch(',
];

function isDefaultV2(cls: string, code: string): boolean {
  return (
    cls === 'DefaultUserData' &&
    code.includes('fromtacker.sol_refactored.infra_drivers.openstackimportuserdata_utils') &&
    code.includes('classDefaultUserData(userdata_utils.AbstractUserData):') &&
    DEFAULT_V2_CALLS.every((call) => code.includes(call))
  );
}

/** What Tacker v2's StandardUserData is made of (userdata_standard.py): its index helpers and the utilities its methods call. */
const STANDARD_V2_PARTS = [
  /\ndefadd_idx\(name,index\):\nreturnf(['"])\{name\}-\{index\}\1\n/,
  /\ndefrm_idx\(name_idx\):\nreturnname_idx\.rpartition\((['"])-\1\)\[0\]\n/,
  /\ndefadd_idx_to_vdu_template\(vdu_template,vdu_idx\):\n/,
  /\nget_param\[2\]=add_idx\(get_param\[2\],vdu_idx\)\n/,
  /\nclassStandardUserData\(userdata_utils\.AbstractUserData\):\n/,
  /\ndefinstantiate\(req,inst,grant_req,grant,tmp_csar_dir\):\n/,
  /\ndefscale\(req,inst,grant_req,grant,tmp_csar_dir\):\n/,
  /\ndefheal\(req,inst,grant_req,grant,tmp_csar_dir\):\n/,
  ...['init_nfv_dict', 'get_param_flavor', 'get_param_image', 'get_param_network', 'get_param_fixed_ips'].map(
    (fn) => new RegExp(`(userdata_utils|common_script_utils)\\.${fn}\\(`),
  ),
];

function isStandardV2(cls: string, code: string): boolean {
  return cls === 'StandardUserData' && code.includes('\nfromtacker.sol_refactored.infra_drivers.openstackimportuserdata_utils\n') && STANDARD_V2_PARTS.every((re) => re.test(code));
}

/** Tacker v1's sample `instantiate`: the four utility dicts, create_final_param_dict over them, returned. */
function isSampleV1(cls: string, code: string): boolean {
  const alias = /\nimporttacker\.vnfm\.lcm_user_data\.utilsas(\w+)\n/.exec(code)?.[1];
  if (!alias || !code.includes(`\nclass${cls}(AbstractUserData):`) || !code.includes('\nfromtacker.vnfm.lcm_user_data.abstract_user_dataimportAbstractUserData\n')) return false;
  const start = code.indexOf(`\nclass${cls}(AbstractUserData):`);
  const body = /@staticmethod\ndefinstantiate\(([^)]*)\):\n([\s\S]*?)(?=\n@|\ndef|\nclass|$)/.exec(code.slice(start));
  if (!body) return false;
  const statements = body[2]!.replace(/\(\n/g, '(').replace(/,\n/g, ',').split('\n').filter(Boolean);
  const call = (fn: string, args: string) => new RegExp(`^(\\w+)=${alias}\\.${fn}\\(${args}\\)$`);
  const steps = [
    call('create_initial_param_dict', 'base_hot_dict'),
    call('create_vdu_flavor_dict', 'vnfd_dict'),
    call('create_vdu_image_dict', 'grant_info'),
    call('create_cpd_vl_dict', 'base_hot_dict,inst_req_info'),
  ];
  if (statements.length !== 6) return false;
  const names = steps.map((re, i) => re.exec(statements[i]!)?.[1]);
  if (names.some((n) => n === undefined)) return false;
  const final = call('create_final_param_dict', names.join(',')).exec(statements[4]!)?.[1];
  return final !== undefined && statements[5] === `return${final}`;
}

const SUPPORTED =
  "vnfm serves natively Tacker v2's DefaultUserData (userdata_default.py), " +
  "Tacker v2's StandardUserData (userdata_standard.py: a resource <VDU>-<index> per VNFC) " +
  "and Tacker v1's sample user data (an instantiate returning create_final_param_dict of create_initial_param_dict, create_vdu_flavor_dict, create_vdu_image_dict and create_cpd_vl_dict), " +
  "and runs any other class of the package, after the operator's consent";

/**
 * The user data a request names (undefined: none), checked: one vnfm serves
 * natively, with a notice saying so, or the package's own class (to be run
 * after consent); a refusal (exit 2) naming the file and the class when the
 * package lacks the file.
 */
export async function checkUserData(source: string, params: unknown, pkg: { id: string; zip: string; hasMember(path: string): boolean }): Promise<UserDataUse | undefined> {
  if (!isObject(params) || (params[USER_DATA] === undefined && params[USER_DATA_CLASS] === undefined)) return undefined;
  const file = params[USER_DATA];
  const cls = params[USER_DATA_CLASS];
  const both = `Tacker names both: "${USER_DATA}": "./UserData/<file>.py" and "${USER_DATA_CLASS}": "<class>"`;
  if (typeof file !== 'string' || file === '') {
    throw new ValidationError(source, `additionalParams.${USER_DATA}`, file === undefined ? `is required with ${USER_DATA_CLASS}` : `${echo(file)} is not a file path`, {
      hint: both,
    });
  }
  if (typeof cls !== 'string' || cls === '') {
    throw new ValidationError(source, `additionalParams.${USER_DATA_CLASS}`, cls === undefined ? `is required with ${USER_DATA}` : `${echo(cls)} is not a class name`, {
      hint: both,
    });
  }
  const member = userDataMember(file);
  const refuse = (where: string, why = '') =>
    new ValidationError(source, `additionalParams.${USER_DATA}`, `asks for Tacker's LCM user data ${echo(file)} (class ${echo(cls)}, in ${where})${why}; ${SUPPORTED}`, {
      hint:
        `to have vnfm build the parameters, remove ${USER_DATA} and ${USER_DATA_CLASS} from additionalParams (values the Base HOT needs beyond them ` +
        'go in additionalParams.nfv, merged over what vnfm builds); nothing was recorded',
    });
  if (!pkg.hasMember(member)) throw refuse(`${member}, which package ${pkg.id} does not have`);
  const files = await openStoredZip(pkg.zip);
  let code: string;
  try {
    code = `\n${compact(await files.readText(member))}\n`;
  } finally {
    await files.close();
  }
  const said = `${USER_DATA} ${file} (class ${cls})`;
  if (isDefaultV2(cls, code)) return { kind: 'tacker-v2-default', notice: `${said} is Tacker v2's DefaultUserData: vnfm builds the same nfv parameter itself` };
  if (isStandardV2(cls, code)) {
    return {
      kind: 'tacker-v2-standard',
      notice: `${said} is Tacker v2's StandardUserData: vnfm makes the stack's resources per VNFC (<VDU>-<index>) and their nfv parameter itself`,
    };
  }
  if (isSampleV1(cls, code)) {
    return { kind: 'tacker-v1-sample', notice: `${said} is Tacker v1's sample user data (create_final_param_dict): vnfm builds the same nfv parameter itself` };
  }
  const generation = generationOf(code);
  const like =
    cls === 'StandardUserData'
      ? " (named like Tacker v2's StandardUserData, but its file is not Tacker's userdata_standard.py: add_idx, rm_idx, add_idx_to_vdu_template, and instantiate, scale and heal over userdata_utils)"
      : '';
  return {
    kind: 'package-class',
    generation,
    file: member,
    className: cls,
    notice: `${said} is the package's own user-data class${like}: vnfm runs it with Tacker ${generation}'s contract, under the package scripts' isolation, to compute the stack's parameters`,
  };
}
