/**
 * vim-config files written the way Tacker's documentation writes them: the
 * CA as a double-quoted multi-line scalar (which YAML folds into one line),
 * `ssl_ca_cert: None`, Helm's `extra: {use_helm: true}`, and the OpenStack
 * example's keys. Each file here is our own, in the documented shapes.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { unfoldPem } from '../../src/vim/pem.js';
import { readVimConfigFile } from '../../src/vim/vim-config.js';

let dir: string;
let caPem: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'vim-config-docs-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=docs-ca', '-keyout', join(dir, 'ca.key'), '-out', join(dir, 'ca.crt')], {
    stdio: 'ignore',
  });
  caPem = readFileSync(join(dir, 'ca.crt'), 'utf8');
});

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** The CA as Tacker's docs paste it: inside double quotes, continuation lines indented. */
function quotedMultiLine(pem: string, indent = '  '): string {
  const lines = pem.trim().split('\n');
  return `"${lines[0]}\n${lines
    .slice(1)
    .map((l) => indent + l)
    .join('\n')}"`;
}

describe('Tacker doc vim-configs', () => {
  it('repairs an ssl_ca_cert folded into one line by a quoted multi-line scalar, with a note', () => {
    const path = write(
      'k8s-quoted.yaml',
      `auth_url: "https://192.0.2.20:6443"\nbearer_token: "sa-token-value"\nssl_ca_cert: ${quotedMultiLine(caPem)}\nproject_name: "default"\ntype: "kubernetes"\n`,
    );
    const cfg = readVimConfigFile(path);
    const stored = cfg.secrets.caCert!;
    // The stored CA is a real PEM again: markers on their own lines, and the same certificate.
    expect(stored.split('\n')[0]).toBe('-----BEGIN CERTIFICATE-----');
    expect(new X509Certificate(stored).fingerprint256).toBe(new X509Certificate(caPem).fingerprint256);
    expect(cfg.spec.verifyTls).toBe(true);
    expect(cfg.warnings).toHaveLength(1);
    expect(cfg.warnings[0]).toMatch(/ssl_ca_cert \(line 3\) is PEM folded into one line.*as Tacker does/);
  });

  it('reads the Helm example: extra.use_helm and further extra keys are kept', () => {
    const path = write(
      'helm.yaml',
      `auth_url: "https://192.0.2.21:6443"\nbearer_token: "helm-token"\nssl_ca_cert: ${quotedMultiLine(caPem, '    ')}\nproject_name: "default"\ntype: "kubernetes"\nextra:\n    use_helm: true\n    area: east@region\n`,
    );
    const cfg = readVimConfigFile(path);
    expect(cfg.spec.extra).toEqual({ use_helm: true, area: 'east@region' });
    expect(cfg.warnings.filter((w) => /unknown field/.test(w))).toEqual([]);
  });

  it('takes ssl_ca_cert: None (and "None") as an explicitly unverified connection', () => {
    for (const value of ['None', '"None"']) {
      const path = write('none.yaml', `auth_url: "https://192.0.2.22:6443"\nbearer_token: "t"\nssl_ca_cert: ${value}\nproject_name: "default"\ntype: "kubernetes"\n`);
      const cfg = readVimConfigFile(path);
      expect(cfg.spec.verifyTls).toBe(false);
      expect(cfg.secrets.caCert).toBeUndefined();
    }
  });

  it('reads the OIDC example', () => {
    const path = write(
      'oidc.yaml',
      `auth_url: "https://192.0.2.23:6443"\nusername: "end-user"\npassword: "end-user-pw"\nclient_id: "cluster-client"\nclient_secret: "client-pw"\noidc_token_url: "https://192.0.2.23:8443/realms/r/protocol/openid-connect/token"\nssl_ca_cert: ${quotedMultiLine(caPem)}\nproject_name: "default"\ntype: "kubernetes"\n`,
    );
    const cfg = readVimConfigFile(path);
    expect(cfg.spec.auth).toMatchObject({ method: 'oidc', username: 'end-user', clientId: 'cluster-client' });
    expect(cfg.warnings.filter((w) => /unknown field/.test(w))).toEqual([]);
  });

  it('reads every key of the OpenStack example without a note', () => {
    const path = write(
      'os.yaml',
      `auth_url: 'http://192.0.2.30/identity'\nusername: 'nfv_operator'\npassword: 'operator-pw'\nproject_name: 'nfv-east'\nproject_domain_name: 'Default'\nuser_domain_name: 'Default'\ncert_verify: 'False'\n`,
    );
    const cfg = readVimConfigFile(path);
    expect(cfg.spec).toMatchObject({ type: 'openstack', projectName: 'nfv-east', projectDomainName: 'Default', verifyTls: false });
    expect(cfg.warnings.filter((w) => /unknown field/.test(w))).toEqual([]);
  });

  it('still names an unknown key, and still refuses a blank ssl_ca_cert', () => {
    const unknown = write('unknown.yaml', `auth_url: "https://192.0.2.24:6443"\nbearer_token: "t"\nproject_name: "default"\ntype: "kubernetes"\nuse_helm: true\n`);
    expect(readVimConfigFile(unknown).warnings).toContain(`${unknown}: unknown field "use_helm" ignored`);
    const blank = write('blank.yaml', `auth_url: "https://192.0.2.24:6443"\nbearer_token: "t"\nproject_name: "default"\ntype: "kubernetes"\nssl_ca_cert:\n`);
    expect(() => readVimConfigFile(blank)).toThrow(ValidationError);
  });

  it('refuses a folded CA whose body is damaged, naming the field', () => {
    const broken = caPem.trim().split('\n');
    broken[2] = 'not*base64*at*all';
    const path = write(
      'damaged.yaml',
      `auth_url: "https://192.0.2.25:6443"\nbearer_token: "t"\nssl_ca_cert: ${quotedMultiLine(broken.join('\n'))}\nproject_name: "default"\ntype: "kubernetes"\n`,
    );
    expect(() => readVimConfigFile(path)).toThrow(/ssl_ca_cert \(line 3\): is not a PEM certificate/);
  });
});

describe('unfoldPem', () => {
  it('leaves proper PEM untouched and rebuilds a folded bundle of two', () => {
    expect(unfoldPem(caPem)).toEqual({ text: caPem, folded: false });
    const one = caPem.trim().replace(/\n/g, ' ');
    const { text, folded } = unfoldPem(`${one} ${one}`);
    expect(folded).toBe(true);
    expect(text.match(/^-----BEGIN CERTIFICATE-----$/gm)).toHaveLength(2);
    expect(text.match(/^-----END CERTIFICATE-----$/gm)).toHaveLength(2);
  });
});
