import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { cloudsYamlCandidates, readCloudsYaml, type ReadCloudsYamlOptions } from '../../src/vim/clouds-yaml.js';
import { makeTestPki, type TestPki } from '../support/openssl-pki.js';

let pki: TestPki;
let root: string;

beforeAll(() => {
  pki = makeTestPki();
  root = mkdtempSync(join(tmpdir(), 'vnfm-clouds-'));
});
afterAll(() => {
  pki.cleanup();
  rmSync(root, { recursive: true, force: true });
});

type Doc = any;

/** A fresh cwd, home and site directory; nothing outside them is read. */
function sandbox(env: Record<string, string | undefined> = {}): ReadCloudsYamlOptions & { cwd: string; home: string; siteDir: string } {
  const dir = mkdtempSync(join(root, 'case-'));
  const opts = { env, cwd: join(dir, 'work'), home: join(dir, 'home'), siteDir: join(dir, 'etc-openstack') };
  for (const d of [opts.cwd, opts.home, opts.siteDir]) mkdirSync(d, { recursive: true });
  return opts;
}

function write(path: string, doc: Doc): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, typeof doc === 'string' ? doc : yaml.dump(doc));
  return path;
}

function baseClouds(): Doc {
  return {
    clouds: {
      lab: {
        auth: {
          auth_url: 'https://keystone.lab.test:5000/v3',
          username: 'admin',
          password: 'pw',
          project_name: 'vnf',
          user_domain_name: 'Default',
          project_domain_name: 'Default',
        },
        region_name: 'RegionOne',
      },
      edge: { auth: { auth_url: 'https://edge.test/identity/v3' } },
    },
  };
}

function withLab(mutate: (lab: Doc) => void): () => Doc {
  return () => {
    const d = baseClouds();
    mutate(d.clouds.lab);
    return d;
  };
}

interface BadCase {
  name: string;
  /** Written to <cwd>/clouds.yaml unless absent. */
  clouds?: string | (() => Doc);
  /** Written to <cwd>/secure.yaml when present. */
  secure?: Doc;
  /** Extra files to write in cwd. */
  files?: Record<string, string>;
  cloud?: string;
  explicitFile?: string;
  /** Which file the error must name: the clouds.yaml in cwd (default), secure.yaml, the bare name, or the explicit file. */
  blame?: 'clouds' | 'secure' | 'bare' | 'explicit';
  field?: string;
  problem: string;
  hint: string;
}

const bad: BadCase[] = [
  { name: 'no clouds.yaml anywhere', blame: 'bare', problem: 'was not found; looked in:', hint: 'OS_CLIENT_CONFIG_FILE' },
  { name: 'explicit file missing', explicitFile: 'nope/clouds.yaml', blame: 'explicit', problem: 'does not exist', hint: 'check the path' },
  { name: 'not YAML', clouds: 'clouds: {lab: [\n', problem: 'is not valid YAML', hint: 'indentation' },
  { name: 'not a mapping', clouds: '- lab\n', problem: 'expected a mapping, found a list', hint: 'clouds:' },
  { name: 'no clouds key', clouds: () => ({ lab: {} }), field: 'clouds', problem: 'is missing', hint: 'top-level clouds:' },
  { name: 'unknown cloud', clouds: baseClouds, cloud: 'prod', field: 'clouds', problem: 'has no cloud named "prod"; clouds: "lab", "edge"', hint: 'pick one of: lab, edge' },
  { name: 'entry not a mapping', clouds: () => ({ clouds: { lab: 'x' } }), field: 'clouds.lab', problem: 'must be a mapping, not a string', hint: 'indent' },
  {
    name: 'auth_url missing',
    clouds: withLab((l) => {
      delete l.auth.auth_url;
    }),
    field: 'clouds.lab.auth.auth_url',
    problem: 'is missing',
    hint: 'Keystone endpoint',
  },
  {
    name: 'auth_url without scheme',
    clouds: withLab((l) => {
      l.auth.auth_url = 'keystone:5000/v3';
    }),
    field: 'clouds.lab.auth.auth_url',
    problem: 'is not an http(s):// URL with a host',
    hint: 'with its scheme',
  },
  {
    name: 'password missing',
    clouds: withLab((l) => {
      delete l.auth.password;
    }),
    field: 'clouds.lab.auth.password',
    problem: 'is missing',
    hint: 'secure.yaml',
  },
  {
    name: 'password not a string',
    clouds: withLab((l) => {
      l.auth.password = ['a'];
    }),
    field: 'clouds.lab.auth.password',
    problem: 'must be a string, not a list',
    hint: 'quote',
  },
  {
    name: 'bad password in secure.yaml',
    clouds: baseClouds,
    secure: { clouds: { lab: { auth: { password: { nested: 1 } } } } },
    blame: 'secure',
    field: 'clouds.lab.auth.password',
    problem: 'must be a string, not a mapping',
    hint: 'quote',
  },
  {
    name: 'user missing',
    clouds: withLab((l) => {
      delete l.auth.username;
    }),
    field: 'clouds.lab.auth.username',
    problem: 'is missing (and so is user_id)',
    hint: 'user_domain_name',
  },
  {
    name: 'user domain missing',
    clouds: withLab((l) => {
      delete l.auth.user_domain_name;
    }),
    field: 'clouds.lab.auth.user_domain_name',
    problem: 'needs the domain of user "admin"',
    hint: 'often Default',
  },
  {
    name: 'project missing',
    clouds: withLab((l) => {
      delete l.auth.project_name;
    }),
    field: 'clouds.lab.auth.project_name',
    problem: 'VNFs are deployed into a project',
    hint: 'project_id',
  },
  {
    name: 'project domain missing',
    clouds: withLab((l) => {
      delete l.auth.project_domain_name;
    }),
    field: 'clouds.lab.auth.project_domain_name',
    problem: 'domain of project "vnf"',
    hint: 'project_domain_id',
  },
  {
    name: 'unsupported auth_type',
    clouds: withLab((l) => {
      l.auth_type = 'v3oidcpassword';
    }),
    field: 'clouds.lab.auth_type',
    problem: '"v3oidcpassword" is not supported',
    hint: 'application credential',
  },
  {
    name: 'password type with an application credential',
    clouds: withLab((l) => {
      l.auth = { auth_url: 'https://k.test/v3', application_credential_id: 'id1', application_credential_secret: 's' };
    }),
    field: 'clouds.lab.auth_type',
    problem: 'auth holds an application credential',
    hint: 'auth_type: v3applicationcredential',
  },
  {
    name: 'application credential without secret',
    clouds: withLab((l) => {
      l.auth_type = 'v3applicationcredential';
      l.auth = { auth_url: 'https://k.test/v3', application_credential_id: 'id1' };
    }),
    field: 'clouds.lab.auth.application_credential_secret',
    problem: 'is missing',
    hint: 'secure.yaml',
  },
  {
    name: 'application credential without id or name',
    clouds: withLab((l) => {
      l.auth_type = 'v3applicationcredential';
      l.auth = { auth_url: 'https://k.test/v3', application_credential_secret: 's' };
    }),
    field: 'clouds.lab.auth.application_credential_id',
    problem: 'is missing (and so is application_credential_name)',
    hint: 'openstack application credential show',
  },
  {
    name: 'application credential by name without its user',
    clouds: withLab((l) => {
      l.auth_type = 'v3applicationcredential';
      l.auth = { auth_url: 'https://k.test/v3', application_credential_name: 'vnfm', application_credential_secret: 's' };
    }),
    field: 'clouds.lab.auth.username',
    problem: 'is missing',
    hint: 'user_id',
  },
  {
    name: 'cacert file missing',
    clouds: withLab((l) => {
      l.cacert = 'certs/ca.pem';
    }),
    field: 'clouds.lab.cacert',
    problem: 'certs/ca.pem, which does not exist',
    hint: 'current directory',
  },
  {
    name: 'cacert not PEM',
    clouds: withLab((l) => {
      l.cacert = 'ca.pem';
    }),
    files: { 'ca.pem': 'hello' },
    field: 'clouds.lab.cacert',
    problem: 'is not a PEM certificate: contains no -----BEGIN CERTIFICATE----- block',
    hint: 'PEM file of the CA',
  },
  {
    name: 'cacert holds a private key',
    clouds: withLab((l) => {
      l.cacert = 'ca.pem';
    }),
    files: { 'ca.pem': 'KEY' },
    field: 'clouds.lab.cacert',
    problem: 'PRIVATE KEY',
    hint: 'PEM file of the CA',
  },
  {
    name: 'verify is a string',
    clouds: withLab((l) => {
      l.verify = 'no';
    }),
    field: 'clouds.lab.verify',
    problem: 'must be true or false, not a string',
    hint: 'verify: false',
  },
  {
    name: 'Keystone v2',
    clouds: withLab((l) => {
      l.identity_api_version = 2;
    }),
    field: 'clouds.lab.identity_api_version',
    problem: 'Keystone v3 only',
    hint: 'identity_api_version: 3',
  },
  {
    name: 'unknown interface',
    clouds: withLab((l) => {
      l.interface = 'private';
    }),
    field: 'clouds.lab.interface',
    problem: 'expected public, internal or admin',
    hint: 'interface: public',
  },
  {
    name: 'client TLS certificate',
    clouds: withLab((l) => {
      l.cert = '/x.pem';
    }),
    field: 'clouds.lab.cert',
    problem: 'TLS client certificate',
    hint: 'application credential',
  },
];

describe('readCloudsYaml: malformed input', () => {
  it.each(bad)('$name', (c) => {
    const opts = sandbox();
    const cloudsPath = join(opts.cwd, 'clouds.yaml');
    const securePath = join(opts.cwd, 'secure.yaml');
    if (c.clouds !== undefined) write(cloudsPath, typeof c.clouds === 'function' ? c.clouds() : c.clouds);
    if (c.secure !== undefined) write(securePath, c.secure);
    for (const [name, text] of Object.entries(c.files ?? {})) write(join(opts.cwd, name), text === 'KEY' ? pki.clientKey : text);
    if (c.explicitFile) opts.file = c.explicitFile;

    let caught: unknown;
    try {
      readCloudsYaml(c.cloud ?? 'lab', opts);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    const err = caught as ValidationError;
    expect(err.exitCode).toBe(2);
    const blamed = {
      clouds: cloudsPath,
      secure: securePath,
      bare: 'clouds.yaml',
      explicit: join(opts.cwd, c.explicitFile ?? ''),
    }[c.blame ?? 'clouds'];
    expect(err.file).toBe(blamed);
    expect(err.message.startsWith(blamed)).toBe(true);
    expect(err.field).toBe(c.field);
    if (c.field) expect(err.message).toContain(`: ${c.field}: `);
    expect(err.message).toContain(c.problem);
    expect(err.hint).toContain(c.hint);
  });

  it('lists every place it looked when no file is found', () => {
    const opts = sandbox({ OS_CLIENT_CONFIG_FILE: '/nonexistent/my-clouds.yaml' });
    expect(() => readCloudsYaml('lab', opts)).toThrow(ValidationError);
    try {
      readCloudsYaml('lab', opts);
    } catch (err) {
      const message = (err as Error).message;
      for (const where of ['/nonexistent/my-clouds.yaml', join(opts.cwd, 'clouds.yaml'), join(opts.home, '.config/openstack/clouds.yaml'), join(opts.siteDir, 'clouds.yaml')]) {
        expect(message).toContain(where);
      }
    }
  });
});

describe('readCloudsYaml: search order', () => {
  const lab = (authUrl: string) => ({ clouds: { lab: { auth: { ...baseClouds().clouds.lab.auth, auth_url: authUrl } } } });

  it('prefers OS_CLIENT_CONFIG_FILE, then the cwd, then the home, then the site directory', () => {
    const opts = sandbox();
    write(join(opts.siteDir, 'clouds.yaml'), lab('https://site.test/v3'));
    expect(readCloudsYaml('lab', opts).spec.authUrl).toBe('https://site.test/v3');
    write(join(opts.home, '.config/openstack/clouds.yaml'), lab('https://home.test/v3'));
    expect(readCloudsYaml('lab', opts).spec.authUrl).toBe('https://home.test/v3');
    write(join(opts.cwd, 'clouds.yaml'), lab('https://cwd.test/v3'));
    expect(readCloudsYaml('lab', opts).spec.authUrl).toBe('https://cwd.test/v3');
    const override = write(join(opts.cwd, 'elsewhere', 'mine.yaml'), lab('https://env.test/v3'));
    opts.env = { OS_CLIENT_CONFIG_FILE: override };
    expect(readCloudsYaml('lab', opts).spec.authUrl).toBe('https://env.test/v3');
  });

  it('reads only the explicit file when one is given', () => {
    const opts = sandbox();
    write(join(opts.cwd, 'clouds.yaml'), lab('https://cwd.test/v3'));
    write(join(opts.cwd, 'other.yaml'), lab('https://other.test/v3'));
    expect(readCloudsYaml('lab', { ...opts, file: 'other.yaml' }).spec.authUrl).toBe('https://other.test/v3');
    expect(cloudsYamlCandidates({ ...opts, file: 'other.yaml' })).toEqual([join(opts.cwd, 'other.yaml')]);
  });
});

describe('readCloudsYaml: good input', () => {
  it('reads a password cloud with region, interface and a CA file', () => {
    const opts = sandbox();
    write(join(opts.cwd, 'certs', 'ca.pem'), pki.caCert);
    write(
      join(opts.cwd, 'clouds.yaml'),
      withLab((l) => {
        l.cacert = 'certs/ca.pem';
        l.interface = 'internal';
      })(),
    );
    const vim = readCloudsYaml('lab', opts);
    expect(vim.spec).toEqual({
      type: 'openstack',
      authUrl: 'https://keystone.lab.test:5000/v3',
      projectName: 'vnf',
      projectDomainName: 'Default',
      auth: { method: 'password', username: 'admin', userDomainName: 'Default' },
      verifyTls: true,
      regionName: 'RegionOne',
      extra: { interface: 'internal' },
    });
    expect(vim.secrets).toEqual({ password: 'pw', caCert: pki.caCert });
    expect(vim.warnings).toEqual([]);
  });

  it('merges secure.yaml over the entry', () => {
    const opts = sandbox();
    write(
      join(opts.cwd, 'clouds.yaml'),
      withLab((l) => {
        delete l.auth.password;
      })(),
    );
    write(join(opts.cwd, 'secure.yaml'), { clouds: { lab: { auth: { password: 'from-secure' } } } });
    expect(readCloudsYaml('lab', opts).secrets.password).toBe('from-secure');
  });

  it('takes secure.yaml from OS_CLIENT_SECURE_FILE first', () => {
    const opts = sandbox();
    write(join(opts.cwd, 'clouds.yaml'), baseClouds());
    write(join(opts.cwd, 'secure.yaml'), { clouds: { lab: { auth: { password: 'beside' } } } });
    const envSecure = write(join(opts.cwd, 'vault', 's.yaml'), { clouds: { lab: { auth: { password: 'from-env' } } } });
    opts.env = { OS_CLIENT_SECURE_FILE: envSecure };
    expect(readCloudsYaml('lab', opts).secrets.password).toBe('from-env');
  });

  it('maps ids: user_id, project_id, and *_domain_id into extra', () => {
    const opts = sandbox();
    write(
      join(opts.cwd, 'clouds.yaml'),
      withLab((l) => {
        l.auth = { auth_url: 'https://k.test/v3', user_id: 'u-1', password: 1234, project_id: 'p-1', user_domain_id: 'd-1', project_domain_id: 'd-2' };
      })(),
    );
    const vim = readCloudsYaml('lab', opts);
    expect(vim.spec.auth).toEqual({ method: 'password', userId: 'u-1' });
    expect(vim.spec.projectId).toBe('p-1');
    expect(vim.spec.projectName).toBeUndefined();
    expect(vim.spec.extra).toEqual({ user_domain_id: 'd-1' });
    expect(vim.secrets.password).toBe('1234');
  });

  it('lets domain_name stand for both domains, accepts dashed keys and top-level auth keys', () => {
    const opts = sandbox();
    write(join(opts.cwd, 'clouds.yaml'), {
      clouds: {
        lab: {
          'auth-type': 'v3password',
          auth: { 'auth-url': 'https://k.test/v3', username: 'ops', 'project-name': 'nfv', domain_name: 'Corp' },
          password: 'top',
          project_domain_id: 'corp-id',
          regions: ['R1', { name: 'R2' }],
        },
      },
    });
    const vim = readCloudsYaml('lab', opts);
    expect(vim.spec.auth).toEqual({ method: 'password', username: 'ops', userDomainName: 'Corp' });
    expect(vim.spec.projectDomainName).toBe('Corp');
    expect(vim.spec.extra).toEqual({ project_domain_id: 'corp-id' });
    expect(vim.spec.regionName).toBe('R1');
    expect(vim.secrets.password).toBe('top');
    expect(vim.warnings.join('\n')).toContain('several regions');
  });

  it('reads an application credential by id', () => {
    const opts = sandbox();
    write(join(opts.cwd, 'clouds.yaml'), {
      clouds: { lab: { auth_type: 'v3applicationcredential', auth: { auth_url: 'https://k.test/v3', application_credential_id: 'ac-1', application_credential_secret: 'sec' } } },
    });
    const vim = readCloudsYaml('lab', opts);
    expect(vim.spec).toEqual({ type: 'openstack', authUrl: 'https://k.test/v3', auth: { method: 'application-credential', applicationCredentialId: 'ac-1' }, verifyTls: true });
    expect(vim.secrets).toEqual({ applicationCredentialSecret: 'sec' });
  });

  it('reads an application credential by name with its user', () => {
    const opts = sandbox();
    write(join(opts.cwd, 'clouds.yaml'), {
      clouds: {
        lab: {
          auth_type: 'applicationcredential',
          auth: {
            auth_url: 'https://k.test/v3',
            application_credential_name: 'vnfm',
            username: 'ops',
            user_domain_name: 'Default',
            application_credential_secret: 'sec',
            project_name: 'ignored',
          },
        },
      },
    });
    const vim = readCloudsYaml('lab', opts);
    expect(vim.spec.auth).toEqual({ method: 'application-credential', applicationCredentialName: 'vnfm', username: 'ops', userDomainName: 'Default' });
    expect(vim.spec.projectName).toBeUndefined();
    expect(vim.warnings.join('\n')).toContain('bound to the project');
  });

  it('turns verify: false into verifyTls false with a warning, ignoring cacert', () => {
    const opts = sandbox();
    write(
      join(opts.cwd, 'clouds.yaml'),
      withLab((l) => {
        l.verify = false;
        l.cacert = '/does/not/matter.pem';
      })(),
    );
    const vim = readCloudsYaml('lab', opts);
    expect(vim.spec.verifyTls).toBe(false);
    expect(vim.secrets.caCert).toBeUndefined();
    expect(vim.warnings.some((w) => w.includes('verify: false'))).toBe(true);
    expect(vim.warnings.some((w) => w.includes('cacert is ignored'))).toBe(true);
  });
});
