/**
 * The OpenStack room: Keystone v3 (tokens, catalog, the VIM check), Heat
 * (stacks, resources, events), Glance (a package's software images), and
 * the infra-driver that runs VNFs as Heat stacks. openstack-http.ts alone
 * sends their HTTP; service-connection.ts holds a service's token and
 * endpoint.
 */
export { checkOpenStackVim, findEndpoint, issueToken, keystoneV3Url } from './keystone.js';
export type { KeystoneCredentials, KeystoneToken, OpenStackVimCheck } from './keystone.js';
export { createHeatSession, HeatError, StackStalledError } from './heat.js';
export type { HeatSession, HeatSessionOptions, HeatStack, HeatResource, HeatEvent, StackContent, StackRef } from './heat.js';
export { createGlanceSession, GlanceError } from './glance.js';
export type { GlanceImage, GlanceSession, GlanceSessionOptions } from './glance.js';
export { createOpenStackDriver, type OpenStackDriverOptions } from './driver.js';
export * from './driver-contract.js';
