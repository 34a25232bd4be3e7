import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError, ValidationError } from '../../src/errors.js';
import { readKubeconfig } from '../../src/vim/kubeconfig.js';
import { makeTestPki, type TestPki } from '../support/openssl-pki.js';

let pki: TestPki;
let root: string;

beforeAll(() => {
  pki = makeTestPki();
  root = mkdtempSync(join(tmpdir(), 'vnfm-kubeconfig-'));
});
afterAll(() => {
  pki.cleanup();
  rmSync(root, { recursive: true, force: true });
});

const b64 = (text: string) => Buffer.from(text).toString('base64');

type Doc = any;

/** A valid kubeconfig with two contexts on one cluster and a token user. */
function baseDoc(): Doc {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c1', cluster: { server: 'https://10.0.0.1:6443', 'certificate-authority-data': b64(pki.caCert) } }],
    users: [{ name: 'u1', user: { token: 'abc.def-123' } }],
    contexts: [
      { name: 'prod', context: { cluster: 'c1', user: 'u1', namespace: 'vnf' } },
      { name: 'dev', context: { cluster: 'c1', user: 'u1' } },
    ],
    'current-context': 'prod',
  };
}

function caseDir(): string {
  return mkdtempSync(join(root, 'case-'));
}

function writeDoc(dir: string, doc: Doc, name = 'config'): string {
  const path = join(dir, name);
  writeFileSync(path, typeof doc === 'string' ? doc : yaml.dump(doc));
  return path;
}

function mutated(mutate: (d: Doc) => void): Doc {
  const d = baseDoc();
  mutate(d);
  return d;
}

/** Deferred, because the certificates exist only once beforeAll has run. */
function withDoc(mutate: (d: Doc) => void): () => Doc {
  return () => mutated(mutate);
}

function aliasBomb(): string {
  const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
  const names = 'abcdefgh';
  for (let i = 1; i < names.length; i++) {
    lines.push(
      `${names[i]}: &${names[i]} [${Array(10)
        .fill(`*${names[i - 1]}`)
        .join(', ')}]`,
    );
  }
  return lines.join('\n') + '\n';
}

interface BadCase {
  name: string;
  /** The kubeconfig: a mutation of the base document, raw text, or absent (missing file). */
  doc?: Doc | ((dir: string) => Doc);
  missing?: true;
  opts?: { context?: string; namespace?: string };
  field?: string;
  problem: string;
  hint: string;
}

const bad: BadCase[] = [
  { name: 'file missing', missing: true, problem: 'does not exist', hint: 'kubeconfig' },
  { name: 'not YAML', doc: 'clusters: [a\n', problem: 'is not valid YAML', hint: 'indentation' },
  { name: 'duplicate keys', doc: 'kind: Config\nkind: Config\n', problem: 'is not valid YAML', hint: 'only once' },
  { name: 'not a mapping', doc: '- a\n- b\n', problem: 'expected a mapping, found a list', hint: 'kind: Config' },
  { name: 'alias bomb', doc: aliasBomb(), problem: 'once its YAML aliases are followed', hint: 'aliases' },
  { name: 'oversized', doc: `x: "${'y'.repeat(4 * 1024 * 1024)}"\n`, problem: 'more than the 4194304 accepted', hint: 'kubeconfig' },
  {
    name: 'a Secret, not a Config',
    doc: withDoc((d) => {
      d.kind = 'Secret';
    }),
    field: 'kind',
    problem: '"Secret", not "Config"',
    hint: 'base64 -d',
  },
  {
    name: 'no contexts',
    doc: withDoc((d) => {
      d.contexts = [];
    }),
    field: 'contexts',
    problem: 'has no contexts',
    hint: 'kubectl config set-context',
  },
  {
    name: 'contexts not a list',
    doc: withDoc((d) => {
      d.contexts = { prod: {} };
    }),
    field: 'contexts',
    problem: 'must be a list, not a mapping',
    hint: '- name: NAME',
  },
  {
    name: 'duplicate context names',
    doc: withDoc((d) => {
      d.contexts[1].name = 'prod';
    }),
    field: 'contexts[name=prod]',
    problem: 'is defined twice (entries 1 and 2)',
    hint: 'rename',
  },
  {
    name: 'no current-context',
    doc: withDoc((d) => {
      delete d['current-context'];
    }),
    field: 'current-context',
    problem: 'contexts: "prod", "dev"',
    hint: '--context',
  },
  {
    name: 'current-context names nothing',
    doc: withDoc((d) => {
      d['current-context'] = 'gone';
    }),
    field: 'current-context',
    problem: 'names context "gone", which is not defined; contexts: "prod", "dev"',
    hint: '--context',
  },
  {
    name: 'requested context missing',
    doc: baseDoc,
    opts: { context: 'staging' },
    field: 'contexts',
    problem: 'no context named "staging"; contexts: "prod", "dev"',
    hint: 'one of: "prod", "dev"',
  },
  {
    name: 'context without cluster',
    doc: withDoc((d) => {
      delete d.contexts[0].context.cluster;
    }),
    field: 'contexts[name=prod].context.cluster',
    problem: 'is missing',
    hint: 'cluster',
  },
  {
    name: 'context names a missing cluster',
    doc: withDoc((d) => {
      d.contexts[0].context.cluster = 'c9';
    }),
    field: 'contexts[name=prod].context.cluster',
    problem: 'cluster "c9", which is not defined; clusters: "c1"',
    hint: 'kubectl config set-cluster',
  },
  {
    name: 'context names a missing user',
    doc: withDoc((d) => {
      d.contexts[0].context.user = 'admin';
    }),
    field: 'contexts[name=prod].context.user',
    problem: 'user "admin", which is not defined; users: "u1"',
    hint: 'kubectl config set-credentials',
  },
  {
    name: 'bad namespace in context',
    doc: withDoc((d) => {
      d.contexts[0].context.namespace = 'My_NS';
    }),
    field: 'contexts[name=prod].context.namespace',
    problem: 'not a valid namespace name',
    hint: 'lower-case',
  },
  {
    name: 'server missing',
    doc: withDoc((d) => {
      delete d.clusters[0].cluster.server;
    }),
    field: 'clusters[name=c1].cluster.server',
    problem: 'is missing',
    hint: 'https://',
  },
  {
    name: 'server over http',
    doc: withDoc((d) => {
      d.clusters[0].cluster.server = 'http://10.0.0.1:8080';
    }),
    field: 'clusters[name=c1].cluster.server',
    problem: 'is not an https:// URL with a host',
    hint: 'over TLS only',
  },
  {
    name: 'server without scheme',
    doc: withDoc((d) => {
      d.clusters[0].cluster.server = '10.0.0.1:6443';
    }),
    field: 'clusters[name=c1].cluster.server',
    problem: 'is not an https:// URL with a host',
    hint: 'https://192.168.0.10:6443',
  },
  {
    name: 'server without host',
    doc: withDoc((d) => {
      d.clusters[0].cluster.server = 'https://';
    }),
    field: 'clusters[name=c1].cluster.server',
    problem: 'is not an https:// URL',
    hint: 'with its scheme',
  },
  {
    name: 'CA data not base64',
    doc: withDoc((d) => {
      d.clusters[0].cluster['certificate-authority-data'] = 'not base64!';
    }),
    field: 'clusters[name=c1].cluster.certificate-authority-data',
    problem: 'is not valid base64',
    hint: 'base64 -w0 ca.crt',
  },
  {
    name: 'CA data is raw PEM',
    doc: withDoc((d) => {
      d.clusters[0].cluster['certificate-authority-data'] = pki.caCert;
    }),
    field: 'clusters[name=c1].cluster.certificate-authority-data',
    problem: 'holds PEM text, but *-data fields hold base64',
    hint: 'base64 -w0 ca.crt',
  },
  {
    name: 'CA data decodes to no PEM',
    doc: withDoc((d) => {
      d.clusters[0].cluster['certificate-authority-data'] = b64('hello world');
    }),
    field: 'clusters[name=c1].cluster.certificate-authority-data',
    problem: 'is not a PEM CA certificate after base64 decoding',
    hint: 'base64 of the PEM file',
  },
  {
    name: 'CA data decodes to a broken certificate',
    doc: withDoc((d) => {
      d.clusters[0].cluster['certificate-authority-data'] = b64('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    }),
    field: 'clusters[name=c1].cluster.certificate-authority-data',
    problem: 'certificate 1 of 1 (starting on line 1) is not a valid X.509 certificate',
    hint: 'base64 of the PEM file',
  },
  {
    name: 'CA file missing',
    doc: withDoc((d) => {
      delete d.clusters[0].cluster['certificate-authority-data'];
      d.clusters[0].cluster['certificate-authority'] = 'pki/ca.crt';
    }),
    field: 'clusters[name=c1].cluster.certificate-authority',
    problem: 'pki/ca.crt, which does not exist',
    hint: "kubeconfig's directory",
  },
  {
    name: 'CA file is not PEM',
    doc: (dir: string) => {
      writeFileSync(join(dir, 'ca.crt'), 'nope');
      return mutated((d) => {
        delete d.clusters[0].cluster['certificate-authority-data'];
        d.clusters[0].cluster['certificate-authority'] = 'ca.crt';
      });
    },
    field: 'clusters[name=c1].cluster.certificate-authority',
    problem: 'which is not a PEM certificate',
    hint: 'certificate-authority-data',
  },
  {
    name: 'CA data and file both',
    doc: withDoc((d) => {
      d.clusters[0].cluster['certificate-authority'] = '/etc/ca.crt';
    }),
    field: 'clusters[name=c1].cluster.certificate-authority-data',
    problem: 'and certificate-authority are both set',
    hint: 'keep one',
  },
  {
    name: 'insecure together with a CA',
    doc: withDoc((d) => {
      d.clusters[0].cluster['insecure-skip-tls-verify'] = true;
    }),
    field: 'clusters[name=c1].cluster.insecure-skip-tls-verify',
    problem: 'is true while a certificate authority is also set',
    hint: 'remove',
  },
  {
    name: 'insecure not a boolean',
    doc: withDoc((d) => {
      d.clusters[0].cluster['insecure-skip-tls-verify'] = 'yes please';
    }),
    field: 'clusters[name=c1].cluster.insecure-skip-tls-verify',
    problem: 'must be true or false, not a string',
    hint: 'unquoted',
  },
  {
    name: 'exec plugin',
    doc: withDoc((d) => {
      d.users[0].user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws' } };
    }),
    field: 'users[name=u1].user.exec',
    problem: 'exec credential plugin (command "aws"); exec and auth-provider plugins are not supported because vnfm stores a static credential',
    hint: 'kubectl create token',
  },
  {
    name: 'auth-provider plugin',
    doc: withDoc((d) => {
      d.users[0].user = { 'auth-provider': { name: 'oidc', config: {} } };
    }),
    field: 'users[name=u1].user.auth-provider',
    problem: 'auth-provider plugin ("oidc")',
    hint: 'bearer_token',
  },
  {
    name: 'no credential',
    doc: withDoc((d) => {
      d.users[0].user = {};
    }),
    field: 'users[name=u1].user',
    problem: 'has no credential',
    hint: 'kubectl create token',
  },
  {
    name: 'token and basic auth',
    doc: withDoc((d) => {
      d.users[0].user.username = 'admin';
    }),
    field: 'users[name=u1].user',
    problem: 'more than one credential (token, username/password)',
    hint: 'remove all but one',
  },
  {
    name: 'empty token file',
    doc: (dir: string) => {
      writeFileSync(join(dir, 'token'), '\n');
      return mutated((d) => {
        d.users[0].user = { tokenFile: 'token' };
      });
    },
    field: 'users[name=u1].user.tokenFile',
    problem: 'is empty',
    hint: 'kubectl create token',
  },
  {
    name: 'token file missing',
    doc: withDoc((d) => {
      d.users[0].user = { tokenFile: 'secret/token' };
    }),
    field: 'users[name=u1].user.tokenFile',
    problem: 'secret/token, which does not exist',
    hint: "kubeconfig's directory",
  },
  {
    name: 'username without password',
    doc: withDoc((d) => {
      d.users[0].user = { username: 'admin' };
    }),
    field: 'users[name=u1].user.password',
    problem: 'is missing while username is set',
    hint: 'add password',
  },
  {
    name: 'key without cert',
    doc: withDoc((d) => {
      d.users[0].user = { 'client-key-data': b64(pki.clientKey) };
    }),
    field: 'users[name=u1].user.client-key-data',
    problem: 'is set without a client certificate',
    hint: 'client-certificate-data',
  },
  {
    name: 'cert without key',
    doc: withDoc((d) => {
      d.users[0].user = { 'client-certificate-data': b64(pki.clientCert) };
    }),
    field: 'users[name=u1].user.client-certificate-data',
    problem: 'is set without its private key',
    hint: 'client-key-data',
  },
  {
    name: 'cert data not PEM',
    doc: withDoc((d) => {
      d.users[0].user = { 'client-certificate-data': b64('xx'), 'client-key-data': b64(pki.clientKey) };
    }),
    field: 'users[name=u1].user.client-certificate-data',
    problem: 'is not a PEM client certificate after base64 decoding',
    hint: 'base64 -w0 client.crt',
  },
  {
    name: 'key data not a key',
    doc: withDoc((d) => {
      d.users[0].user = { 'client-certificate-data': b64(pki.clientCert), 'client-key-data': b64(pki.caCert) };
    }),
    field: 'users[name=u1].user.client-key-data',
    problem: 'is not a PEM private key',
    hint: 'unencrypted PEM key',
  },
  {
    name: 'key of another certificate',
    doc: withDoc((d) => {
      d.users[0].user = { 'client-certificate-data': b64(pki.clientCert), 'client-key-data': b64(pki.otherKey) };
    }),
    field: 'users[name=u1].user.client-key-data',
    problem: 'does not belong to the client certificate',
    hint: 'generated together',
  },
  {
    name: 'user entry not a mapping',
    doc: withDoc((d) => {
      d.users[0].user = 'token';
    }),
    field: 'users[name=u1].user',
    problem: 'must be a mapping, not a string',
    hint: 'indent',
  },
];

describe('readKubeconfig: malformed input', () => {
  it.each(bad)('$name', (c) => {
    const dir = caseDir();
    let path = join(dir, 'config');
    if (!c.missing) {
      const doc = typeof c.doc === 'function' ? c.doc(dir) : c.doc;
      path = writeDoc(dir, doc);
    }
    let caught: unknown;
    try {
      readKubeconfig(path, c.opts ?? {});
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    const err = caught as ValidationError;
    expect(err.exitCode).toBe(2);
    expect(err.file).toBe(path);
    expect(err.message).toContain(path);
    expect(err.field).toBe(c.field);
    if (c.field) expect(err.message).toContain(`: ${c.field}: `);
    expect(err.message).toContain(c.problem);
    expect(err.hint).toContain(c.hint);
  });

  it('refuses an invalid --namespace as a usage error', () => {
    const path = writeDoc(caseDir(), baseDoc());
    expect(() => readKubeconfig(path, { namespace: 'Bad.NS' })).toThrow(UsageError);
  });
});

describe('readKubeconfig: good input', () => {
  it('reads the current context: token, embedded CA, context namespace', () => {
    const path = writeDoc(caseDir(), baseDoc());
    const vim = readKubeconfig(path, {});
    expect(vim.spec).toEqual({
      type: 'kubernetes',
      authUrl: 'https://10.0.0.1:6443',
      projectName: 'vnf',
      auth: { method: 'bearer-token' },
      verifyTls: true,
    });
    expect(vim.secrets).toEqual({ bearerToken: 'abc.def-123', caCert: pki.caCert });
    expect(vim.warnings).toEqual([]);
  });

  it('honours --context and --namespace, and defaults the namespace', () => {
    const path = writeDoc(caseDir(), baseDoc());
    expect(readKubeconfig(path, { context: 'dev' }).spec.projectName).toBe('default');
    expect(readKubeconfig(path, { context: 'dev', namespace: 'edge' }).spec.projectName).toBe('edge');
    expect(readKubeconfig(path, { namespace: 'edge' }).spec.projectName).toBe('edge');
  });

  it('verifies against the system trust store when no CA is given', () => {
    const path = writeDoc(
      caseDir(),
      mutated((d) => {
        d.clusters[0].cluster = { server: 'https://api.example.test/k8s/clusters/c-1/' };
      }),
    );
    const vim = readKubeconfig(path, {});
    expect(vim.spec.verifyTls).toBe(true);
    expect(vim.spec.authUrl).toBe('https://api.example.test/k8s/clusters/c-1');
    expect(vim.secrets.caCert).toBeUndefined();
  });

  it('resolves tokenFile and certificate-authority against the kubeconfig directory, not the cwd', () => {
    const dir = caseDir();
    mkdirSync(join(dir, 'kube', 'pki'), { recursive: true });
    writeFileSync(join(dir, 'kube', 'pki', 'ca.crt'), pki.caCert);
    writeFileSync(join(dir, 'kube', 'token'), 'file-token\n');
    const path = writeDoc(
      join(dir, 'kube'),
      mutated((d) => {
        d.clusters[0].cluster = { server: 'https://10.0.0.1:6443', 'certificate-authority': 'pki/ca.crt', 'tls-server-name': 'kubernetes' };
        d.users[0].user = { tokenFile: 'token' };
      }),
    );
    const vim = readKubeconfig(path, {});
    expect(vim.spec.auth).toEqual({ method: 'bearer-token' });
    expect(vim.secrets).toEqual({ bearerToken: 'file-token', caCert: pki.caCert });
    expect(vim.spec.extra).toEqual({ 'tls-server-name': 'kubernetes' });
    expect(vim.warnings.join('\n')).toContain('does not re-read the file');
  });

  it('reads embedded client certificate data', () => {
    const path = writeDoc(
      caseDir(),
      mutated((d) => {
        d.users[0].user = { 'client-certificate-data': b64(pki.clientCert), 'client-key-data': b64(pki.clientKey) };
      }),
    );
    const vim = readKubeconfig(path, {});
    expect(vim.spec.auth).toEqual({ method: 'client-certificate' });
    expect(vim.secrets.clientCert).toBe(pki.clientCert);
    expect(vim.secrets.clientKey).toBe(pki.clientKey);
    expect(vim.secrets.bearerToken).toBeUndefined();
  });

  it('reads client certificate and key files', () => {
    const path = writeDoc(
      caseDir(),
      mutated((d) => {
        d.users[0].user = { 'client-certificate': join(pki.dir, 'client.crt'), 'client-key': join(pki.dir, 'client.key') };
      }),
    );
    const vim = readKubeconfig(path, {});
    expect(vim.spec.auth).toEqual({ method: 'client-certificate' });
    expect(vim.secrets).toMatchObject({ clientCert: pki.clientCert, clientKey: pki.clientKey });
  });

  it('reads basic auth and an explicitly insecure cluster, with warnings', () => {
    const path = writeDoc(
      caseDir(),
      mutated((d) => {
        d.clusters[0].cluster = { server: 'https://10.0.0.1:6443', 'insecure-skip-tls-verify': true };
        d.users[0].user = { username: 'admin', password: 's3cret' };
      }),
    );
    const vim = readKubeconfig(path, {});
    expect(vim.spec.auth).toEqual({ method: 'basic', username: 'admin' });
    expect(vim.spec.verifyTls).toBe(false);
    expect(vim.secrets).toEqual({ password: 's3cret' });
    expect(vim.warnings.some((w) => w.includes('insecure-skip-tls-verify: true'))).toBe(true);
    expect(vim.warnings.some((w) => w.includes('basic auth'))).toBe(true);
  });

  it('accepts a CA bundle with several certificates', () => {
    const bundle = pki.caCert + pki.clientCert;
    const path = writeDoc(
      caseDir(),
      mutated((d) => {
        d.clusters[0].cluster['certificate-authority-data'] = b64(bundle);
      }),
    );
    expect(readKubeconfig(path, {}).secrets.caCert).toBe(bundle);
  });
});
