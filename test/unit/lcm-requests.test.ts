/** Request bodies checked against the basic-cnf VNFD, an instance and the VIMs: each refusal names the field. */
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openPackage } from '../../src/csar/index.js';
import { ConflictError, UsageError, ValidationError } from '../../src/errors.js';
import type { VnfInstance } from '../../src/lcm/index.js';
import { levelReplicas } from '../../src/lcm/index.js';
import { checkHealRequest, checkInstantiateRequest, checkScaleRequest, checkTerminateRequest } from '../../src/lcm/requests.js';
import { redactVimConnectionInfo, resolveVimConnection, type VimLookup } from '../../src/lcm/vim-connection.js';
import type { Vim } from '../../src/vim/index.js';
import { loadVnfd, type Vnfd } from '../../src/vnfd/index.js';

let vnfd: Vnfd;
const DEFS = ['Files/kubernetes/configmap.yaml', 'Files/kubernetes/service.yaml', 'Files/kubernetes/deployment_vdu1.yaml', 'Files/kubernetes/deployment_vdu2.yaml'];
const pkg = { hasMember: (p: string) => DEFS.includes(p) || p === 'Definitions/basic_cnf_top.vnfd.yaml', kubernetesDefinitions: DEFS };

beforeAll(async () => {
  const files = await openPackage(resolve(import.meta.dirname, '../../csar-samples/basic-cnf/package'));
  vnfd = (await loadVnfd(files, 'Definitions/basic_cnf_top.vnfd.yaml')).vnfd!;
  await files.close();
});

const base: VnfInstance = {
  id: 'i1',
  vnfInstanceDescription: '',
  vnfdId: 'v',
  vnfPkgId: 'p',
  vnfProvider: '',
  vnfProductName: '',
  vnfSoftwareVersion: '',
  vnfdVersion: '',
  instantiationState: 'NOT_INSTANTIATED',
  createdAt: '',
  updatedAt: '',
};

function instantiated(level = 0): VnfInstance {
  return {
    ...base,
    instantiationState: 'INSTANTIATED',
    instantiatedVnfInfo: {
      flavourId: 'simple',
      vnfState: 'STARTED',
      scaleStatus: [
        { aspectId: 'vdu1_aspect', scaleLevel: level },
        { aspectId: 'vdu2_aspect', scaleLevel: 0 },
      ],
      maxScaleLevels: levelReplicas(vnfd.flavours['simple']!).maxScaleLevels,
      vnfcResourceInfo: [{ id: 'vdu1-a', vduId: 'VDU1', computeResource: { resourceId: 'vdu1-a', vimLevelResourceType: 'Pod' }, metadata: {} }],
      vnfcInfo: [{ id: 'VDU1-vdu1-a', vduId: 'VDU1', vnfcResourceInfoId: 'vdu1-a', vnfcState: 'STARTED' }],
      resources: [],
      metadata: { namespace: 'default', 'lcm-kubernetes-def-files': DEFS, vduReplicas: { VDU1: 1 + level, VDU2: 1 } },
    },
  };
}

/** The field a refusal names (ValidationError), or the message of a UsageError. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ValidationError) return err.field ?? '(file)';
    if (err instanceof UsageError) return err.message;
    // The instance's state, not the request, refuses it: a conflict (exit 4), on every command.
    if (err instanceof ConflictError) return `conflict: ${err.message}`;
    throw err;
  }
  throw new Error('not refused');
}

describe('InstantiateVnfRequest', () => {
  it('accepts the sample request and defaults the definition files to the package', () => {
    const ok = checkInstantiateRequest('req.json', { flavourId: 'simple' }, base, vnfd, pkg);
    expect(ok.defFiles).toEqual(DEFS);
    expect(ok.flavour.id).toBe('simple');
  });

  it.each([
    [[], '(file)'],
    [{}, 'flavourId'],
    [{ flavourId: 'big' }, 'flavourId'],
    [{ flavourId: 'simple', instantiationLevelId: 'level_9' }, 'instantiationLevelId'],
    [{ flavourId: 'simple', additionalParams: { 'lcm-kubernetes-def-files': [] } }, 'additionalParams.lcm-kubernetes-def-files'],
    [{ flavourId: 'simple', additionalParams: { 'lcm-kubernetes-def-files': [DEFS[0], 'Files/x.yaml'] } }, 'additionalParams.lcm-kubernetes-def-files[1]'],
    [{ flavourId: 'simple', additionalParams: { 'lcm-kubernetes-def-files': ['../../etc/passwd'] } }, 'additionalParams.lcm-kubernetes-def-files[0]'],
    [{ flavourId: 'simple', additionalParams: { namespace: 'Not_A_Namespace' } }, 'additionalParams.namespace'],
    [{ flavourId: 'simple', vimConnectionInfo: { vim1: 'k8s' } }, 'vimConnectionInfo.vim1'],
  ])('%j is refused at %s', (body, field) => {
    expect(refusal(() => checkInstantiateRequest('req.json', body, base, vnfd, pkg))).toBe(field);
  });

  it('refuses an instance that is already INSTANTIATED', () => {
    expect(refusal(() => checkInstantiateRequest('req.json', { flavourId: 'simple' }, instantiated(), vnfd, pkg))).toMatch(/^conflict: .*already INSTANTIATED/);
  });
});

describe('ScaleVnfRequest', () => {
  const simple = () => vnfd.flavours['simple']!;
  it('computes the target level and replicas', () => {
    expect(checkScaleRequest('s', { type: 'SCALE_OUT', aspectId: 'vdu1_aspect', numberOfSteps: 2 }, instantiated(), simple())).toMatchObject({
      fromLevel: 0,
      toLevel: 2,
      replicas: { VDU1: 3, VDU2: 1 },
    });
    expect(checkScaleRequest('s', { type: 'SCALE_IN', aspectId: 'vdu1_aspect' }, instantiated(1), simple()).replicas).toEqual({ VDU1: 1, VDU2: 1 });
  });

  it.each([
    [{ type: 'SCALE_UP', aspectId: 'vdu1_aspect' }, 'type'],
    [{ type: 'SCALE_OUT' }, 'aspectId'],
    [{ type: 'SCALE_OUT', aspectId: 'vdu3_aspect' }, 'aspectId'],
    [{ type: 'SCALE_OUT', aspectId: 'vdu1_aspect', numberOfSteps: 0 }, 'numberOfSteps'],
    [{ type: 'SCALE_OUT', aspectId: 'vdu1_aspect', numberOfSteps: 1.5 }, 'numberOfSteps'],
    [{ type: 'SCALE_OUT', aspectId: 'vdu1_aspect', numberOfSteps: 3 }, 'numberOfSteps'],
    [{ type: 'SCALE_IN', aspectId: 'vdu1_aspect' }, 'numberOfSteps'],
  ])('%j is refused at %s', (body, field) => {
    expect(refusal(() => checkScaleRequest('s', body, instantiated(), simple()))).toBe(field);
  });

  it('refuses a level the vdu_profile does not allow', () => {
    const tight = { ...simple(), vdus: { ...simple().vdus, VDU1: { ...simple().vdus['VDU1']!, vduProfile: { minNumberOfInstances: 1, maxNumberOfInstances: 2 } } } };
    expect(() => checkScaleRequest('s', { type: 'SCALE_OUT', aspectId: 'vdu1_aspect', numberOfSteps: 2 }, instantiated(), tight)).toThrow(
      /VDU1 3 instances, outside its vdu_profile \(1\.\.2\)/,
    );
  });
});

describe('HealVnfRequest and TerminateVnfRequest', () => {
  it('heals named VNFCs, all when none is named, and refuses an unknown id unless retrying', () => {
    expect(checkHealRequest('h', {}, instantiated()).vnfcs).toHaveLength(1);
    expect(refusal(() => checkHealRequest('h', { vnfcInstanceId: ['VDU1-vdu1-a', 'VDU1-gone'] }, instantiated()))).toBe('vnfcInstanceId[1]');
    expect(checkHealRequest('h', { vnfcInstanceId: ['VDU1-gone'] }, instantiated(), true).vnfcs).toEqual([]);
  });

  it('checks the termination type and timeout', () => {
    expect(checkTerminateRequest('t', {}, instantiated()).terminationType).toBe('GRACEFUL');
    expect(refusal(() => checkTerminateRequest('t', { terminationType: 'NOW' }, instantiated()))).toBe('terminationType');
    expect(refusal(() => checkTerminateRequest('t', { terminationType: 'FORCEFUL', gracefulTerminationTimeout: 5 }, instantiated()))).toBe('gracefulTerminationTimeout');
    expect(refusal(() => checkTerminateRequest('t', {}, base))).toMatch(/^conflict: .*NOT_INSTANTIATED/);
  });
});

describe('vimConnectionInfo', () => {
  const k8s = { id: 'v1', name: 'k8s', spec: { type: 'kubernetes', authUrl: 'https://127.0.0.1:1', auth: { method: 'bearer-token' }, verifyTls: true } } as Vim;
  const os = { id: 'v2', name: 'os', spec: { type: 'openstack', authUrl: 'http://127.0.0.1:5000', auth: { method: 'password' }, verifyTls: true } } as Vim;
  const lookup: VimLookup = {
    find: async (ref) => [k8s, os].find((v) => v.id === ref || v.name === ref),
    findDefault: async () => undefined,
    openSecrets: async () => ({ bearerToken: 'stored' }),
  };
  const fallback = async () => {
    throw new ValidationError('r', 'vimConnectionInfo', 'no default');
  };
  const field = (p: Promise<unknown>) =>
    p.then(
      () => 'accepted',
      (e: ValidationError) => e.field,
    );

  it('names a registered VIM by name or id, and opens its secrets', async () => {
    const vim = await resolveVimConnection('r', { a: { vimId: 'k8s', vimType: 'kubernetes' } }, lookup, fallback);
    expect(vim).toMatchObject({ id: 'v1', inline: false, secrets: { bearerToken: 'stored' } });
  });

  it('takes an inline VIM and keeps its secrets out of what is recorded', async () => {
    const info = {
      a: { vimId: 'edge', vimType: 'ETSINFV.KUBERNETES.V_1', interfaceInfo: { endpoint: 'https://127.0.0.1:6443', ssl_ca_cert: 'None' }, accessInfo: { bearer_token: 'sekret' } },
    };
    const vim = await resolveVimConnection('r', info, lookup, fallback);
    expect(vim).toMatchObject({ inline: true, name: 'edge', spec: { authUrl: 'https://127.0.0.1:6443', verifyTls: false }, secrets: { bearerToken: 'sekret' } });
    expect(JSON.stringify(redactVimConnectionInfo(info))).not.toContain('sekret');
  });

  it('rebuilds an inline ssl_ca_cert folded into one line, as Tacker v2 does', async () => {
    const folded = '-----BEGIN CERTIFICATE----- MIIBfolded AAAAbody== -----END CERTIFICATE-----';
    const info = { a: { vimId: 'edge', vimType: 'kubernetes', interfaceInfo: { endpoint: 'https://127.0.0.1:6443', ssl_ca_cert: folded }, accessInfo: { bearer_token: 't' } } };
    const vim = await resolveVimConnection('r', info, lookup, fallback);
    expect(vim.secrets.caCert).toBe('-----BEGIN CERTIFICATE-----\nMIIBfolded\nAAAAbody==\n-----END CERTIFICATE-----\n');
    expect(vim.spec.verifyTls).toBe(true);
  });

  it.each([
    [{ a: { vimId: 'nope' } }, 'vimConnectionInfo.a.vimId'],
    [{ a: { vimId: 'os' } }, 'vimConnectionInfo.a.vimId'],
    [{ a: { vimId: 'x', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3' } }, 'vimConnectionInfo.a.vimType'],
    [{ a: { vimId: 'x', vimType: 'vmware' } }, 'vimConnectionInfo.a.vimType'],
    [{ a: { interfaceInfo: { endpoint: 'ftp://x' }, accessInfo: { bearer_token: 't' } } }, 'vimConnectionInfo.a.interfaceInfo.endpoint'],
    [{ a: { interfaceInfo: { endpoint: 'https://127.0.0.1:1' }, accessInfo: {} } }, 'vimConnectionInfo.a.accessInfo'],
    // A blank CA is not "do not verify": only the explicit "None" is.
    [{ a: { interfaceInfo: { endpoint: 'https://127.0.0.1:1', ssl_ca_cert: null }, accessInfo: { bearer_token: 't' } } }, 'vimConnectionInfo.a.interfaceInfo.ssl_ca_cert'],
    [undefined, 'vimConnectionInfo'],
  ])('%j is refused at %s', async (info, want) => {
    expect(await field(resolveVimConnection('r', info as never, lookup, fallback))).toBe(want);
  });

  it('refuses an OpenStack VIM where a Kubernetes one is needed', async () => {
    await expect(resolveVimConnection('r', { a: { vimId: 'os' } }, lookup, fallback)).rejects.toThrow(/is an OpenStack VIM, where this operation needs a Kubernetes VIM/);
  });
});
