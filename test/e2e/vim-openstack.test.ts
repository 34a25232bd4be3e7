/**
 * The real program registering OpenStack VIMs against a real Keystone
 * (Debian's keystone under uwsgi on 127.0.0.1, started by test/support).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useKeystone, type KeystoneServer } from '../support/keystone.js';
import { newHome, vnfm } from '../support/cli.js';

let ks: KeystoneServer;
let dir: string;

beforeAll(async () => {
  ks = await useKeystone();
  dir = mkdtempSync(join(tmpdir(), 'vnfm-os-'));
});

afterAll(async () => {
  await ks?.stop();
});

function config(name: string, fields: Record<string, unknown>): string {
  const path = join(dir, name);
  writeFileSync(path, yaml.dump(fields));
  return path;
}

const good = () => ({
  auth_url: ks.url,
  username: ks.user.name,
  password: ks.user.password,
  project_name: ks.project,
  project_domain_name: 'Default',
  user_domain_name: 'Default',
  cert_verify: 'True',
});

describe('OpenStack VIMs against a real Keystone', () => {
  it('registers with a password, checks the catalog, and masks the password everywhere', async () => {
    const home = newHome();
    const r = await vnfm(['vim-register', '--config-file', config('os.yaml', good()), 'vim-os', '-o', 'json'], { home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`project ${ks.projectId}, Heat at http://127\\.0\\.0\\.1:8004/v1/${ks.projectId}`));
    const vim = JSON.parse(r.stdout);
    expect(vim).toMatchObject({ type: 'openstack', status: 'REACHABLE', vim_project: { name: ks.project, project_domain_name: 'Default' } });
    expect(vim.auth_cred).toMatchObject({ username: ks.user.name, password: '***', cert_verify: 'True' });
    for (const fmt of ['table', 'json', 'yaml']) {
      const show = await vnfm(['vim-show', 'vim-os', '-o', fmt], { home });
      expect(show.stdout).toContain('vim-os');
      expect(show.stdout + show.stderr).not.toContain(ks.user.password);
    }
  });

  it('registers with an application credential', async () => {
    const home = newHome();
    const path = config('appcred.yaml', {
      auth_url: ks.url,
      application_credential_id: ks.appCredential.id,
      application_credential_secret: ks.appCredential.secret,
      project_name: ks.project,
    });
    const r = await vnfm(['vim-register', '--config-file', path, 'vim-app'], { home });
    expect(r.code, r.stderr).toBe(0);
  });

  it('registers from clouds.yaml (OS_CLIENT_CONFIG_FILE)', async () => {
    const home = newHome();
    const clouds = join(dir, 'clouds.yaml');
    writeFileSync(
      clouds,
      yaml.dump({
        clouds: {
          lab: {
            auth: { auth_url: ks.url, username: ks.user.name, password: ks.user.password, project_name: ks.project, user_domain_name: 'Default', project_domain_name: 'Default' },
            region_name: ks.region,
          },
        },
      }),
    );
    const r = await vnfm(['vim-register', '--os-cloud', 'lab', 'vim-lab', '-o', 'json'], { home, env: { OS_CLIENT_CONFIG_FILE: clouds } });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ name: 'vim-lab', region_name: ks.region });
  });

  it('a bad password fails with exit 6, never echoes the password, and stores nothing', async () => {
    const home = newHome();
    expect((await vnfm(['vim-register', '--config-file', config('ok.yaml', good()), 'first'], { home })).code).toBe(0);
    const before = (await vnfm(['vim-list', '-o', 'json'], { home })).stdout;
    const wrong = 'wrong-' + Math.random().toString(36).slice(2);
    const r = await vnfm(['vim-register', '--config-file', config('bad.yaml', { ...good(), password: wrong }), 'second'], { home });
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(new RegExp(`Keystone.*rejected.*${ks.user.name}|${ks.user.name}.*rejected`));
    expect(r.stderr).not.toContain(wrong);
    expect((await vnfm(['vim-list', '-o', 'json'], { home })).stdout).toBe(before);
  });

  it('an unknown project fails with exit 6 and stores nothing', async () => {
    const home = newHome();
    const r = await vnfm(['vim-register', '--config-file', config('noproj.yaml', { ...good(), project_name: 'no-such-project' }), 'v'], { home });
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/no-such-project/);
    expect((await vnfm(['vim-list', '-o', 'json'], { home })).stdout.trim()).toBe('[]');
  });
});
