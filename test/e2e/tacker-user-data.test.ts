/**
 * Tacker's LCM user data (`additionalParams.lcm-operation-user-data` and
 * `lcm-operation-user-data-class`) on an OpenStack VNF: a class of the
 * package's own is package code, so a request naming one without the
 * operator's consent is refused (exit 2) before any occurrence is recorded,
 * naming the file, the class and the flag, instead of being served by
 * vnfm's own nfv builder without a word; so is a file the package lacks.
 * The package is the heat-vnf sample with user-data files of our own in
 * Tacker's layout.
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
  it("the package's own class is refused without the operator's consent, naming the file, the class and the flag", async () => {
    const r = await refused('custom', { 'lcm-operation-user-data': './UserData/site_user_data.py', 'lcm-operation-user-data-class': 'SiteUserData' });
    expect(r.stderr).toContain('additionalParams.lcm-operation-user-data-class "SiteUserData" is the package\'s own user-data class (in UserData/site_user_data.py of package');
    expect(r.stderr).toContain("running a package's code needs the operator's consent");
    expect(r.stderr).toContain('--allow-package-scripts');
    expect(r.stderr).toMatch(/or remove lcm-operation-user-data and lcm-operation-user-data-class/);
  });

  it("a class named StandardUserData whose file is not Tacker's userdata_standard.py is the package's own, saying so", async () => {
    const r = await refused('standard', { 'lcm-operation-user-data': './UserData/userdata_standard.py', 'lcm-operation-user-data-class': 'StandardUserData' });
    expect(r.stderr).toContain("named like Tacker v2's StandardUserData, but its file is not Tacker's userdata_standard.py");
    expect(r.stderr).toContain('"StandardUserData" is the package\'s own user-data class (in UserData/userdata_standard.py of package');
  });

  it("a class named like Tacker's v1 sample that does not compute what the sample does is the package's own (consent asked)", async () => {
    const r = await refused('initial-only', { 'lcm-operation-user-data': 'UserData/initial_only.py', 'lcm-operation-user-data-class': 'SampleUserData' });
    expect(r.stderr).toContain('"SampleUserData" is the package\'s own user-data class (in UserData/initial_only.py of package');
    expect(r.stderr).toContain('--allow-package-scripts');
  });

  it("a Tacker v2 class of the package, allowed, that returns v1's shape is refused, naming file and class", async () => {
    const vnf = JSON.parse(await ok(['vnf-create', '--package', 'heat-vnf-user-data', '--name', 'v2-allowed', '-o', 'json'])).id as string;
    const params = { 'lcm-operation-user-data': './UserData/site_user_data.py', 'lcm-operation-user-data-class': 'SiteUserData' };
    const r = await run(['vnf-instantiate', vnf, '--request-file', await requestWith('v2-allowed', params), '--allow-package-scripts', '-o', 'json']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('user-data class SiteUserData in UserData/site_user_data.py of package');
    expect(r.stderr).toContain('returned no parameters (a dict), which a Tacker v2 class returns');
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
