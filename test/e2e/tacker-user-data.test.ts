/**
 * Tacker's LCM user data (`additionalParams.lcm-operation-user-data` and
 * `lcm-operation-user-data-class`) on an OpenStack VNF: vnfm runs no
 * user-data class, so a request naming one is refused (exit 2) before any
 * occurrence is recorded, naming the file and the class, instead of being
 * served by vnfm's own nfv builder without a word. The package is the
 * heat-vnf sample with a user-data file of our own in Tacker's layout.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, okStdoutWith, vnfm, type RunResult } from '../support/cli.js';

const SAMPLE = resolve('csar-samples/heat-vnf');

let home: string;
let work: string;
let pkgDir: string;

const run = (args: string[]): Promise<RunResult> => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined } });
const ok = okStdoutWith((args) => run(args));

async function requestWith(name: string, additionalParams: Record<string, unknown>): Promise<string> {
  const base = JSON.parse((await readFile(join(SAMPLE, 'requests/instantiate.json'), 'utf8')).replace('REPLACE-WITH-EXTERNAL-NETWORK-ID', 'net-public-1'));
  const file = join(work, `${name}.json`);
  await writeFile(file, JSON.stringify({ ...base, additionalParams }));
  return file;
}

beforeAll(async () => {
  home = newHome();
  work = dirname(home);
  // An OpenStack VIM that is never reached: the refusal comes before the VIM is used.
  await writeFile(
    join(work, 'vim.yaml'),
    'auth_url: "http://127.0.0.1:9/identity/v3"\nusername: nfv\npassword: secret\nproject_name: nfv\nproject_domain_name: Default\nuser_domain_name: Default\n',
  );
  await ok(['vim-register', '--config-file', join(work, 'vim.yaml'), '--is-default', '--no-check', 'os1']);
  pkgDir = await mkdtemp(join(tmpdir(), 'vnfm-user-data-'));
  await cp(join(SAMPLE, 'package'), pkgDir, { recursive: true });
  await mkdir(join(pkgDir, 'UserData'), { recursive: true });
  // A user-data class in Tacker's contract, of our own: it sets every VDU's flavour to a fixed one.
  await writeFile(
    join(pkgDir, 'UserData/site_user_data.py'),
    [
      'class SiteUserData:',
      '    @staticmethod',
      '    def instantiate(req, inst, grant_req, grant, tmp_csar_dir):',
      "        return {'nfv': {'VDU': {'VDU1': {'computeFlavourId': 'site.large'}}}}",
      '',
    ].join('\n'),
  );
  // A class named StandardUserData that is not Tacker's userdata_standard.py (our own stand-in text): not served natively.
  await writeFile(
    join(pkgDir, 'UserData/userdata_standard.py'),
    ['from tacker.sol_refactored.infra_drivers.openstack import userdata_utils', '', '', 'class StandardUserData(userdata_utils.AbstractUserData):', '    pass', ''].join('\n'),
  );
  // The v1 sample's shape, but returning the parameters the Base HOT reads with nothing filled in: not the sample.
  await writeFile(
    join(pkgDir, 'UserData/initial_only.py'),
    [
      'import tacker.vnfm.lcm_user_data.utils as UserDataUtil',
      'from tacker.vnfm.lcm_user_data.abstract_user_data import AbstractUserData',
      '',
      '',
      'class SampleUserData(AbstractUserData):',
      '    @staticmethod',
      '    def instantiate(base_hot_dict=None, vnfd_dict=None, inst_req_info=None, grant_info=None):',
      '        params = UserDataUtil.create_initial_param_dict(base_hot_dict)',
      '        return params',
      '',
    ].join('\n'),
  );
  await ok(['vnfpkg-onboard', pkgDir, '--name', 'heat-vnf-user-data']);
});

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
  if (pkgDir) await rm(pkgDir, { recursive: true, force: true });
});

async function refused(name: string, additionalParams: Record<string, unknown>): Promise<RunResult> {
  const vnf = JSON.parse(await ok(['vnf-create', '--package', 'heat-vnf-user-data', '--name', name, '-o', 'json'])).id as string;
  const r = await run(['vnf-instantiate', vnf, '--request-file', await requestWith(name, additionalParams), '-o', 'json']);
  expect(r.code, r.stderr).toBe(2);
  // Nothing recorded: no occurrence, the instance as it was.
  const ops = JSON.parse(await ok(['op-list', '-o', 'json'])) as Array<{ vnfInstanceId: string }>;
  expect(ops.filter((o) => o.vnfInstanceId === vnf)).toEqual([]);
  expect(JSON.parse(await ok(['vnf-show', vnf, '-o', 'json'])).instantiationState).toBe('NOT_INSTANTIATED');
  return r;
}

describe("Tacker's lcm-operation-user-data on an OpenStack VNF", () => {
  it('a class vnfm cannot run is refused, naming the file, the class and what vnfm does instead', async () => {
    const r = await refused('custom', { 'lcm-operation-user-data': './UserData/site_user_data.py', 'lcm-operation-user-data-class': 'SiteUserData' });
    expect(r.stderr).toContain('additionalParams.lcm-operation-user-data: asks for Tacker\'s LCM user data "./UserData/site_user_data.py" (class "SiteUserData"');
    expect(r.stderr).toContain('UserData/site_user_data.py of package');
    expect(r.stderr).toContain('vnfm runs no user-data class');
    expect(r.stderr).toMatch(/remove lcm-operation-user-data and lcm-operation-user-data-class/);
  });

  it("a class named StandardUserData whose file is not Tacker's userdata_standard.py is refused, saying so", async () => {
    const r = await refused('standard', { 'lcm-operation-user-data': './UserData/userdata_standard.py', 'lcm-operation-user-data-class': 'StandardUserData' });
    expect(r.stderr).toContain('(class "StandardUserData", in UserData/userdata_standard.py of package');
    expect(r.stderr).toContain("named like Tacker v2's StandardUserData, but its file is not Tacker's userdata_standard.py");
    expect(r.stderr).toContain("serves natively Tacker v2's DefaultUserData");
  });

  it("a class named like Tacker's v1 sample that does not compute what the sample does is refused", async () => {
    const r = await refused('initial-only', { 'lcm-operation-user-data': 'UserData/initial_only.py', 'lcm-operation-user-data-class': 'SampleUserData' });
    expect(r.stderr).toContain('(class "SampleUserData", in UserData/initial_only.py of package');
    expect(r.stderr).toContain("Tacker v1's sample user data (an instantiate returning create_final_param_dict");
  });

  it('a file the package does not have is named as missing', async () => {
    const r = await refused('missing', { 'lcm-operation-user-data': './UserData/lcm_user_data.py', 'lcm-operation-user-data-class': 'SampleUserData' });
    expect(r.stderr).toContain('UserData/lcm_user_data.py, which package');
    expect(r.stderr).toContain('does not have');
  });

  it('a class without its file, or a file without its class, is refused', async () => {
    const noFile = await refused('no-file', { 'lcm-operation-user-data-class': 'SiteUserData' });
    expect(noFile.stderr).toContain('additionalParams.lcm-operation-user-data: is required with lcm-operation-user-data-class');
    const noClass = await refused('no-class', { 'lcm-operation-user-data': './UserData/site_user_data.py' });
    expect(noClass.stderr).toContain('additionalParams.lcm-operation-user-data-class: is required with lcm-operation-user-data');
  });
});
