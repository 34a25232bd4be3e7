/**
 * What the real OpenStack tier's Keystone needs besides its bootstrap, over
 * its REST API (no Python client to start: on two busy cores each costs
 * seconds on the cold start's longest path): a user on the `service` project
 * for each service, with the admin role there (where they authenticate their
 * own calls and check tokens); Heat's roles, its `heat` domain and that
 * domain's admin; the catalog entries and their public, internal and admin
 * endpoints. The tests make their own projects and users
 * (real-openstack-client.ts `createTenant`).
 */
import type { CloudLayout } from './real-openstack-conf.js';
import { keystoneUrl } from './real-openstack-conf.js';

type Call = <T>(method: string, path: string, body?: unknown) => Promise<T>;

/** A token of the cloud's admin, scoped to the `admin` project, and that project's id. */
export async function adminToken(url: string, adminPassword: string): Promise<{ token: string; projectId: string }> {
  const res = await fetch(`${url}/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: { methods: ['password'], password: { user: { name: 'admin', domain: { id: 'default' }, password: adminPassword } } },
        scope: { project: { name: 'admin', domain: { id: 'default' } } },
      },
    }),
    signal: AbortSignal.timeout(60_000),
  });
  const body = (await res.json()) as { token?: { project?: { id: string } } };
  const token = res.headers.get('x-subject-token');
  if (res.status !== 201 || !token || !body.token?.project) throw new Error(`the cloud's Keystone refused the admin a token: HTTP ${res.status}`);
  return { token, projectId: body.token.project.id };
}

async function adminCall(url: string, adminPassword: string): Promise<Call> {
  const { token } = await adminToken(url, adminPassword);
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const answer = await fetch(`${url}${path}`, {
      method,
      headers: { 'x-auth-token': token, 'content-type': 'application/json', accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await answer.text();
    if (answer.status >= 300) throw new Error(`Keystone ${method} ${path}: HTTP ${answer.status} ${text.slice(0, 300)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };
}

const idOf = <T extends { id: string }>(o: T) => o.id;

/** Registers every service of the cloud in its Keystone (just bootstrapped: nothing of it exists yet). */
export async function seedKeystone(l: CloudLayout, adminPassword: string): Promise<void> {
  const call = await adminCall(keystoneUrl(l), adminPassword);
  const role = async (name: string) => {
    const { roles } = await call<{ roles: Array<{ id: string }> }>('GET', `/roles?name=${name}`);
    return roles[0] ? idOf(roles[0]) : idOf((await call<{ role: { id: string } }>('POST', '/roles', { role: { name } })).role);
  };
  const [admin, owner] = [await role('admin'), await role('heat_stack_owner')];
  await role('heat_stack_user');
  const service = idOf((await call<{ project: { id: string } }>('POST', '/projects', { project: { name: 'service', domain_id: 'default' } })).project);
  const adminProject = idOf((await call<{ projects: Array<{ id: string }> }>('GET', '/projects?name=admin')).projects[0]!);
  const adminUser = idOf((await call<{ users: Array<{ id: string }> }>('GET', '/users?name=admin')).users[0]!);
  await call('PUT', `/projects/${adminProject}/users/${adminUser}/roles/${owner}`);

  // Users Heat makes for the resources that call back into it live in their own domain.
  const heatDomain = idOf((await call<{ domain: { id: string } }>('POST', '/domains', { domain: { name: 'heat', description: 'Stack projects and users' } })).domain);
  const domainAdmin = { name: 'heat_domain_admin', password: l.passwords.heatDomainAdmin, domain_id: heatDomain };
  const domainAdminId = idOf((await call<{ user: { id: string } }>('POST', '/users', { user: domainAdmin })).user);
  await call('PUT', `/domains/${heatDomain}/users/${domainAdminId}/roles/${admin}`);

  const services = [
    { name: 'heat', type: 'orchestration', url: `http://127.0.0.1:${l.ports.heat}/v1/%(tenant_id)s` },
    { name: 'nova', type: 'compute', url: `http://127.0.0.1:${l.ports.nova}/v2.1` },
    { name: 'neutron', type: 'network', url: `http://127.0.0.1:${l.ports.neutron}` },
    { name: 'glance', type: 'image', url: `http://127.0.0.1:${l.ports.glance}` },
    { name: 'placement', type: 'placement', url: `http://127.0.0.1:${l.ports.placement}` },
  ] as const;
  await Promise.all(
    services.map(async (s) => {
      const user = { name: s.name, password: l.passwords[s.name], domain_id: 'default', default_project_id: service };
      const userId = idOf((await call<{ user: { id: string } }>('POST', '/users', { user })).user);
      await call('PUT', `/projects/${service}/users/${userId}/roles/${admin}`);
      const serviceId = idOf((await call<{ service: { id: string } }>('POST', '/services', { service: { name: s.name, type: s.type } })).service);
      for (const iface of ['public', 'internal', 'admin']) {
        await call('POST', '/endpoints', { endpoint: { service_id: serviceId, interface: iface, url: s.url, region_id: l.region } });
      }
    }),
  );
}
