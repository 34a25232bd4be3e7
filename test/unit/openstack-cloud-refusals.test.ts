/**
 * The reasons a real cloud gives through Heat (as Heat Zed, Nova, Neutron
 * and Glance word them, seen on the real OpenStack tier) and what vnfm makes
 * of them: the cloud named as the cause, with a hint that says what to change
 * there and what op-retry and op-rollback then do with the stack.
 */
import { describe, expect, it } from 'vitest';
import { cloudRefusal, failedStackHint, resourceTypeRefusal } from '../../src/infra/openstack/cloud-refusals.js';

const QUOTA =
  'Resource CREATE failed: Forbidden: resources.VDU1_scale_group.resources.qmulsnfpj3o2.resources.VDU1: Quota exceeded for instances: Requested 1, but already used 1 of 1 instances (HTTP 403) (Request-ID: req-15bee71a-546e-4e6e-a052-d7b0210ca797)';
const NO_HOST = 'Resource CREATE failed: ResourceInError: resources.VDU2: Went to status ERROR due to "Message: No valid host was found. , Code: 500"';
const NO_NETWORK =
  "Property error: resources.VDU2_CP1.properties.network: Error validating value '6a1d4f0e-0000-4000-8000-00000000dead': Unable to find network with name or id '6a1d4f0e-0000-4000-8000-00000000dead'";
const QUEUED = 'Image status is required to be active not queued.';
const NEUTRON_QUOTA = "Resource CREATE failed: OverQuota: resources.VDU1_CP1: Quota exceeded for resources: ['port']. Neutron server returns request_ids: ['req-1']";

describe('cloudRefusal', () => {
  it.each([
    ['Nova: instance quota', QUOTA, true, "the project's quota", /raise the project's quota/],
    ['Neutron: port quota', NEUTRON_QUOTA, true, "the project's quota", /raise the project's quota/],
    ['Nova: no valid host', NO_HOST, true, 'a compute host that can hold the server', /smaller flavour/],
    ['a network that does not exist', NO_NETWORK, false, 'a network the request or the package names', /create the network/],
    ['an image still queued in Glance', QUEUED, false, 'an active image', /not active in Glance/],
  ])('%s', (_name, reason, stackLeft, what, fix) => {
    const r = cloudRefusal(reason, stackLeft)!;
    expect(r.what).toBe(what);
    expect(r.hint).toMatch(fix);
    expect(r.hint).toMatch(/op-retry .*op-rollback/);
    expect(r.hint).toContain(stackLeft ? 'op-rollback deletes the stack' : 'nothing was created');
  });

  it('a reason that is not the cloud’s: none', () => {
    expect(cloudRefusal('The Parameter (no_such_parameter) was not provided.', false)).toBeUndefined();
  });
});

describe('failedStackHint', () => {
  it('names op-retry and op-rollback also when the reason is not the cloud’s', () => {
    expect(failedStackHint('Resource CREATE failed: Error: resources.VDU2: Went to status error')).toMatch(/^fix what Heat names .*op-retry .*op-rollback deletes the stack$/);
  });
});

describe('resourceTypeRefusal', () => {
  // Heat Zed's answer (HTTP 403) to a stack whose template makes a flavor, for a user with member and heat_stack_owner only.
  const FLAVOR = 'You are not authorized to use resource_types:OS::Nova::Flavor.';

  it('a flavor: the admin role named as the fix, not a role that may use Heat (the user has that)', () => {
    const r = resourceTypeRefusal(FLAVOR)!;
    expect(r.what).toBe('the right to use OS::Nova::Flavor');
    expect(r.hint).toMatch(/give the VIM user the admin role on its project/);
    expect(r.hint).not.toMatch(/heat_stack_owner/);
    expect(r.hint).toContain('nothing was created');
  });

  it('another type: its name and the way out', () => {
    expect(resourceTypeRefusal('You are not authorized to use resource_types:OS::Nova::HostAggregate.')!.hint).toMatch(/leaves OS::Nova::HostAggregate to other roles/);
  });

  it('any other 403 (a missing Heat role): none', () => {
    expect(resourceTypeRefusal('You are not authorized to use create.')).toBeUndefined();
  });
});
