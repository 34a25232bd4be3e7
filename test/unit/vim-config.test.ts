import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { readVimConfigFile } from '../../src/vim/vim-config.js';

let dir: string;
let caPem: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'vim-config-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=test-ca',
      '-keyout',
      join(dir, 'ca.key'),
      '-out',
      join(dir, 'ca.crt'),
    ],
    { stdio: 'ignore' },
  );
  caPem = readFileSync(join(dir, 'ca.crt'), 'utf8');
});

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const indent = (pem: string) =>
  pem
    .trim()
    .split('\n')
    .map((l) => '  ' + l)
    .join('\n');

describe('vim-config.yaml, good', () => {
  it('reads a Kubernetes VIM with a bearer token and a CA', () => {
    const path = write('k8s.yaml', `auth_url: "https://10.0.0.1:6443"\nbearer_token: "tok"\nssl_ca_cert: |\n${indent(caPem)}\nproject_name: "ns1"\ntype: "kubernetes"\n`);
    const cfg = readVimConfigFile(path);
    expect(cfg.spec).toMatchObject({ type: 'kubernetes', authUrl: 'https://10.0.0.1:6443', projectName: 'ns1', verifyTls: true, auth: { method: 'bearer-token' } });
    expect(cfg.secrets.bearerToken).toBe('tok');
    expect(cfg.secrets.caCert).toContain('BEGIN CERTIFICATE');
    expect(cfg.warnings).toEqual([]);
  });

  it('prefers OIDC over username/password over bearer_token, as Tacker does', () => {
    const both = write('both.yaml', 'auth_url: https://h:6443\ntype: kubernetes\nproject_name: default\nusername: u\npassword: p\nbearer_token: t\n');
    expect(readVimConfigFile(both).spec.auth).toEqual({ method: 'basic', username: 'u' });
    const oidc = write(
      'oidc.yaml',
      'auth_url: https://h:6443\ntype: kubernetes\nproject_name: default\nusername: u\npassword: p\nbearer_token: t\noidc_token_url: https://idp/token\nclient_id: c\nclient_secret: s\n',
    );
    const cfg = readVimConfigFile(oidc);
    expect(cfg.spec.auth).toEqual({ method: 'oidc', tokenUrl: 'https://idp/token', username: 'u', clientId: 'c' });
    expect(cfg.secrets).toMatchObject({ password: 'p', clientSecret: 's' });
  });

  it('treats ssl_ca_cert: None as an explicitly unverified connection, with a warning', () => {
    const path = write('none.yaml', 'auth_url: https://h:6443\ntype: kubernetes\nproject_name: default\nbearer_token: t\nssl_ca_cert: None\n');
    const cfg = readVimConfigFile(path);
    expect(cfg.spec.verifyTls).toBe(false);
    expect(cfg.warnings.join()).toMatch(/not be verified/);
  });

  it('reads an OpenStack VIM with Tacker defaults (type openstack, Default domains, cert_verify True)', () => {
    const path = write('os.yaml', 'auth_url: http://ks:5000/v3\nusername: nfv_user\npassword: devstack\nproject_name: nfv\nuser_domain_name: Default\n');
    const cfg = readVimConfigFile(path);
    expect(cfg.spec).toMatchObject({
      type: 'openstack',
      projectName: 'nfv',
      projectDomainName: 'Default',
      verifyTls: true,
      auth: { method: 'password', username: 'nfv_user', userDomainName: 'Default' },
    });
    expect(cfg.secrets.password).toBe('devstack');
  });

  it.each([
    ["'False'", false],
    ['False', false],
    ["'True'", true],
    ['true', true],
  ])('cert_verify: %s', (value, expected) => {
    const path = write('cv.yaml', `auth_url: https://ks:5000/v3\nusername: u\npassword: p\nproject_name: p\ncert_verify: ${value}\n`);
    expect(readVimConfigFile(path).spec.verifyTls).toBe(expected);
  });

  it('warns about fields it does not know (a typo should not pass silently)', () => {
    const path = write('typo.yaml', 'auth_url: https://h:6443\ntype: kubernetes\nproject_name: default\nbearer_token: t\nprojct_name: x\n');
    expect(readVimConfigFile(path).warnings.join()).toMatch(/unknown field "projct_name"/);
  });
});

describe('vim-config.yaml, bad: exit code 2, names the file, the field and the fix', () => {
  const k8s = 'type: kubernetes\nproject_name: default\nbearer_token: t\n';
  const cases: [string, string, RegExp, RegExp][] = [
    ['not YAML', 'auth_url: [unclosed\n', /not valid YAML/, /indentation|quoting/],
    ['a list, not a mapping', '- a\n- b\n', /not a YAML mapping/, /auth_url/],
    ['empty', '', /not a YAML mapping/, /auth_url/],
    ['no auth_url', k8s, /auth_url: is required/, /auth_url: https/],
    ['auth_url without scheme', 'auth_url: 10.0.0.1:6443\n' + k8s, /auth_url \(line 1\): "10.0.0.1:6443"/, /https:\/\/HOST:PORT/],
    ['auth_url without host', 'auth_url: "https://"\n' + k8s, /auth_url \(line 1\)/, /HOST/],
    ['unknown type', 'auth_url: https://h\ntype: vmware\nproject_name: x\n', /type \(line 2\): "vmware" is not a VIM type/, /openstack or type: kubernetes/],
    ['kubernetes without project_name', 'auth_url: https://h\ntype: kubernetes\nbearer_token: t\n', /project_name: is required/, /namespace/],
    [
      'kubernetes namespace not DNS-1123',
      'auth_url: https://h\ntype: kubernetes\nbearer_token: t\nproject_name: Bad_NS\n',
      /project_name \(line 4\).*namespace name/,
      /lower-case/,
    ],
    ['kubernetes without auth', 'auth_url: https://h\ntype: kubernetes\nproject_name: default\n', /no usable authentication/, /bearer_token/],
    [
      'OIDC without client_id',
      'auth_url: https://h\ntype: kubernetes\nproject_name: d\noidc_token_url: https://i\nusername: u\npassword: p\n',
      /client_id: is required/,
      /OIDC needs/,
    ],
    ['bearer_token a list', 'auth_url: https://h\ntype: kubernetes\nproject_name: d\nbearer_token: [a]\n', /bearer_token \(line 4\): must be a string/, /bearer_token: "value"/],
    [
      'ssl_ca_cert not PEM',
      'auth_url: https://h\ntype: kubernetes\nproject_name: d\nbearer_token: t\nssl_ca_cert: "hello"\n',
      /ssl_ca_cert \(line 5\): is not a PEM certificate/,
      /ssl_ca_cert: None/,
    ],
    [
      'ssl_ca_cert with a corrupt body',
      'auth_url: https://h\ntype: kubernetes\nproject_name: d\nbearer_token: t\nssl_ca_cert: |\n  -----BEGIN CERTIFICATE-----\n  AAAA\n  -----END CERTIFICATE-----\n',
      /ssl_ca_cert \(line 5\): is not a PEM certificate/,
      /BEGIN CERTIFICATE/,
    ],
    ['openstack without project', 'auth_url: https://ks/v3\nusername: u\npassword: p\n', /project_name: is required/, /project_id/],
    ['openstack without password', 'auth_url: https://ks/v3\nusername: u\nproject_name: p\n', /password: is required/, /password:/],
    ['openstack without user', 'auth_url: https://ks/v3\npassword: p\nproject_name: p\n', /username: is required/, /user_id/],
    [
      'cert_verify not a boolean',
      "auth_url: https://ks/v3\nusername: u\npassword: p\nproject_name: p\ncert_verify: 'maybe'\n",
      /cert_verify \(line 5\): "maybe" is not True or False/,
      /'True'/,
    ],
    ['extra not a mapping', 'auth_url: https://h\ntype: kubernetes\nproject_name: d\nbearer_token: t\nextra: 3\n', /extra \(line 5\): must be a mapping/, /key: value/],
  ];
  it.each(cases)('%s', (name, text, message, hint) => {
    const path = write(`bad-${name.replace(/\W+/g, '-')}.yaml`, text);
    let caught: unknown;
    try {
      readVimConfigFile(path);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    const err = caught as ValidationError;
    expect(err.exitCode).toBe(2);
    expect(err.message).toContain(path);
    expect(err.message).toMatch(message);
    expect(err.hint).toMatch(hint);
  });

  it('a missing file is a ValidationError naming it', () => {
    expect(() => readVimConfigFile(join(dir, 'nope.yaml'))).toThrow(/nope\.yaml.*does not exist/);
  });

  it('refuses an alias bomb instead of expanding it', () => {
    const lines = ['l0: &l0 ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++) lines.push(`l${i}: &l${i} [*l${i - 1},*l${i - 1},*l${i - 1},*l${i - 1},*l${i - 1},*l${i - 1},*l${i - 1},*l${i - 1},*l${i - 1}]`);
    const path = write('bomb.yaml', lines.join('\n'));
    expect(() => readVimConfigFile(path)).toThrow(/YAML aliases are followed/);
  });
});
