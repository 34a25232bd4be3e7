/**
 * Tacker's LCM user data: `additionalParams.lcm-operation-user-data` (a
 * Python file of the package) and `lcm-operation-user-data-class` (a class
 * in it) ask Tacker to compute the Heat stack's parameters with that class
 * (v1: tacker/vnfm/lcm_user_data; v2: sol_refactored's userdata_*.py).
 * vnfm builds the `nfv` parameter itself (heat-nfv.ts), the way Tacker v2's
 * DefaultUserData does, and runs no user-data class: a request that names
 * one is refused before anything is recorded, never quietly served by the
 * builder in its place.
 */
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

/**
 * Refuses a request whose additionalParams name LCM user data: vnfm cannot
 * run it. The message names the file and the class, whether the package has
 * the file, and what vnfm does instead.
 */
export function refuseUserData(source: string, params: unknown, pkg: { id: string; hasMember(path: string): boolean }): void {
  if (!isObject(params) || (params[USER_DATA] === undefined && params[USER_DATA_CLASS] === undefined)) return;
  const file = params[USER_DATA];
  const cls = params[USER_DATA_CLASS];
  if (typeof file !== 'string' || file === '') {
    throw new ValidationError(source, `additionalParams.${USER_DATA}`, file === undefined ? `is required with ${USER_DATA_CLASS}` : `${echo(file)} is not a file path`, {
      hint: `Tacker names both: "${USER_DATA}": "./UserData/<file>.py" and "${USER_DATA_CLASS}": "<class>"`,
    });
  }
  if (typeof cls !== 'string' || cls === '') {
    throw new ValidationError(source, `additionalParams.${USER_DATA_CLASS}`, cls === undefined ? `is required with ${USER_DATA}` : `${echo(cls)} is not a class name`, {
      hint: `Tacker names both: "${USER_DATA}": "./UserData/<file>.py" and "${USER_DATA_CLASS}": "<class>"`,
    });
  }
  const member = userDataMember(file);
  const where = pkg.hasMember(member) ? `${member} of package ${pkg.id}` : `${member}, which package ${pkg.id} does not have`;
  throw new ValidationError(
    source,
    `additionalParams.${USER_DATA}`,
    `asks for Tacker's LCM user data ${echo(file)} (class ${echo(cls)}, in ${where}); vnfm runs no user-data class: ` +
      "it builds the Heat stack's nfv parameter itself, from the VNFD and the request, as Tacker v2's DefaultUserData does",
    {
      hint:
        `to have vnfm build the parameters, remove ${USER_DATA} and ${USER_DATA_CLASS} from additionalParams (values the Base HOT needs beyond them ` +
        'go in additionalParams.nfv, merged over what vnfm builds); nothing was recorded',
    },
  );
}
