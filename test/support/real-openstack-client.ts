/**
 * What a test of the real OpenStack tier uses: the cloud the global setup
 * started (`useRealOpenStack` waits for it), a project and user of its own
 * (`createTenant`), and the cloud's own APIs (`CloudClient`: Nova, Neutron,
 * Glance over REST with a Keystone token), so that assertions read what the
 * cloud really did rather than what vnfm reports.
 */
import { existsSync, readFileSync } from 'node:fs';
import { inject } from 'vitest';
import type { KeystoneInfo } from './keystone.js';
import { randomSecret } from './openstack-process.js';
import type { RealOpenStackInfo } from './real-openstack.js';
import type { RealOpenStackState } from './real-openstack-setup.js';

const READY_TIMEOUT_MS = 25 * 60_000;
const POLL_MS = 2_000;

/** Waits for the global setup's cloud (a cold start takes minutes); throws its error when it did not start. */
export async function useRealOpenStack(): Promise<RealOpenStackInfo> {
  const file = inject('realOpenStackFile');
  if (!file) throw new Error('no real OpenStack in this run: run with VNFM_REAL_OPENSTACK=1 in the real-openstack project');
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`the real OpenStack was not ready after ${READY_TIMEOUT_MS / 60_000} min`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  const state = JSON.parse(readFileSync(file, 'utf8')) as RealOpenStackState;
  if (!state.ready) throw new Error(`the real OpenStack did not start: ${state.error}`);
  return state.info;
}

interface Credentials {
  url: string;
  user: string;
  password: string;
  /** Project scope: by id, or by name in the Default domain. */
  project: { id: string } | { name: string; domain: { id: 'default' } };
}

async function issueToken(c: Credentials): Promise<{ token: string; projectId: string }> {
  const res = await fetch(`${c.url}/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      auth: { identity: { methods: ['password'], password: { user: { name: c.user, domain: { id: 'default' }, password: c.password } } }, scope: { project: c.project } },
    }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await res.json()) as { token?: { project?: { id: string } } };
  const token = res.headers.get('x-subject-token');
  if (res.status !== 201 || !token || !body.token?.project) throw new Error(`Keystone refused a token for ${c.user}: HTTP ${res.status}`);
  return { token, projectId: body.token.project.id };
}

export interface Server {
  id: string;
  name: string;
  status: string;
  flavor: { id: string };
  image: { id: string } | '';
  addresses: Record<string, Array<{ addr: string }>>;
  'OS-EXT-SRV-ATTR:host'?: string;
}

export interface Port {
  id: string;
  network_id: string;
  device_id: string;
  device_owner: string;
  fixed_ips: Array<{ subnet_id: string; ip_address: string }>;
  'binding:host_id'?: string;
  'binding:vif_type'?: string;
}

export interface GlanceImage {
  id: string;
  name: string;
  status: string;
  visibility: string;
  size: number;
  os_hash_algo: string;
  os_hash_value: string;
  tags: string[];
  [property: string]: unknown;
}

export interface Network {
  id: string;
  name: string;
}

/** REST calls to the cloud as one user in one project; the token is taken once and kept (they live an hour). */
export class CloudClient {
  private token: Promise<{ token: string; projectId: string }> | undefined;

  constructor(
    private readonly cloud: RealOpenStackInfo,
    private readonly credentials: Omit<Credentials, 'url'>,
  ) {}

  /** As the cloud's admin (project `admin`). */
  static admin(cloud: RealOpenStackInfo): CloudClient {
    return new CloudClient(cloud, { user: 'admin', password: cloud.keystone.adminPassword, project: { name: 'admin', domain: { id: 'default' } } });
  }

  /** As the user of a tenant (`createTenant`), in its project. */
  static of(cloud: RealOpenStackInfo, tenant: KeystoneInfo): CloudClient {
    return new CloudClient(cloud, { user: tenant.user.name, password: tenant.user.password, project: { id: tenant.projectId } });
  }

  async projectId(): Promise<string> {
    return (await this.auth()).projectId;
  }

  private auth(): Promise<{ token: string; projectId: string }> {
    this.token ??= issueToken({ url: this.cloud.keystone.url, ...this.credentials });
    return this.token;
  }

  /** A request to `base` + `path`; resolves with the parsed body, or undefined for 404 when `allow404`. */
  async call<T>(base: string, method: string, path: string, body?: unknown, opts: { allow404?: boolean; raw?: Buffer } = {}): Promise<T> {
    const { token } = await this.auth();
    const headers: Record<string, string> = { 'x-auth-token': token, accept: 'application/json' };
    if (opts.raw) headers['content-type'] = 'application/octet-stream';
    else if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${base}${path}`, {
      method,
      headers,
      body: opts.raw ? new Uint8Array(opts.raw) : body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    if (res.status === 404 && opts.allow404) return undefined as T;
    if (res.status >= 300) throw new Error(`${method} ${base}${path} answered HTTP ${res.status}: ${text.slice(0, 500)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** The project's servers (Nova), with their flavor and image ids. */
  async servers(): Promise<Server[]> {
    return (await this.call<{ servers: Server[] }>(this.cloud.endpoints.compute, 'GET', '/servers/detail')).servers;
  }

  async server(id: string): Promise<Server | undefined> {
    return (await this.call<{ server: Server } | undefined>(this.cloud.endpoints.compute, 'GET', `/servers/${id}`, undefined, { allow404: true }))?.server;
  }

  /** The project's ports (Neutron lists every project's to an admin: always narrowed to this one). */
  async ports(): Promise<Port[]> {
    const project = await this.projectId();
    return (await this.call<{ ports: Port[] }>(this.cloud.endpoints.network, 'GET', `/v2.0/ports?project_id=${project}`)).ports;
  }

  async networks(): Promise<Network[]> {
    const project = await this.projectId();
    return (await this.call<{ networks: Network[] }>(this.cloud.endpoints.network, 'GET', `/v2.0/networks?project_id=${project}`)).networks;
  }

  /** A network with one IPv4 subnet (no DHCP: nothing boots to ask). */
  async createNetwork(name: string, cidr: string): Promise<string> {
    const net = this.cloud.endpoints.network;
    const { network } = await this.call<{ network: Network }>(net, 'POST', '/v2.0/networks', { network: { name } });
    await this.call(net, 'POST', '/v2.0/subnets', { subnet: { name: `${name}-subnet`, network_id: network.id, ip_version: 4, cidr, enable_dhcp: false } });
    return network.id;
  }

  /** The ids of the subnets of a network. */
  async subnetsOf(networkId: string): Promise<string[]> {
    const { subnets } = await this.call<{ subnets: Array<{ id: string }> }>(this.cloud.endpoints.network, 'GET', `/v2.0/subnets?network_id=${networkId}`);
    return subnets.map((s) => s.id);
  }

  /** The images of the project carrying `tag` (Glance). */
  async imagesTagged(tag: string): Promise<GlanceImage[]> {
    return (await this.call<{ images: GlanceImage[] }>(this.cloud.endpoints.image, 'GET', `/v2/images?tag=${encodeURIComponent(tag)}`)).images;
  }

  async image(id: string): Promise<GlanceImage | undefined> {
    return this.call<GlanceImage | undefined>(this.cloud.endpoints.image, 'GET', `/v2/images/${id}`, undefined, { allow404: true });
  }

  /** A flavor's sizes, by id; undefined once it is deleted. */
  async flavor(id: string): Promise<{ id: string; vcpus: number; ram: number; disk: number } | undefined> {
    return (
      await this.call<{ flavor: { id: string; vcpus: number; ram: number; disk: number } } | undefined>(this.cloud.endpoints.compute, 'GET', `/flavors/${id}`, undefined, {
        allow404: true,
      })
    )?.flavor;
  }

  /** The id of the public flavor `name`, created with these sizes when there is none (admin only). */
  async ensureFlavor(name: string, sizes: { vcpus: number; ramMiB: number; diskGiB: number }): Promise<string> {
    const compute = this.cloud.endpoints.compute;
    const find = async () => (await this.call<{ flavors: Array<{ id: string; name: string }> }>(compute, 'GET', '/flavors')).flavors.find((f) => f.name === name);
    const found = await find();
    if (found) return found.id;
    const body = { flavor: { name, vcpus: sizes.vcpus, ram: sizes.ramMiB, disk: sizes.diskGiB } };
    try {
      return (await this.call<{ flavor: { id: string } }>(compute, 'POST', '/flavors', body)).flavor.id;
    } catch (err) {
      // Another test file of the run made it meanwhile (Nova answers 409): flavors are the cloud's, not a project's.
      const made = await find();
      if (made) return made.id;
      throw err;
    }
  }

  /** The most root disk (GiB) any compute host can give one server: Placement's DISK_GB, (total - reserved) × allocation ratio (admin only). */
  async computeDiskGiB(): Promise<number> {
    const placement = this.cloud.endpoints.placement;
    const { resource_providers: providers } = await this.call<{ resource_providers: Array<{ uuid: string }> }>(placement, 'GET', '/resource_providers');
    let most = 0;
    for (const rp of providers) {
      type Inventory = { total: number; reserved: number; allocation_ratio: number };
      const { inventories } = await this.call<{ inventories: Record<string, Inventory> }>(placement, 'GET', `/resource_providers/${rp.uuid}/inventories`);
      const disk = inventories['DISK_GB'];
      if (disk) most = Math.max(most, Math.floor((disk.total - disk.reserved) * disk.allocation_ratio));
    }
    if (!most) throw new Error('Placement has no compute host with DISK_GB');
    return most;
  }

  /** A private image of this project, uploaded and active. */
  async createImage(name: string, data: Buffer, formats: { disk: string; container: string }): Promise<string> {
    const image = this.cloud.endpoints.image;
    const created = await this.call<{ id: string }>(image, 'POST', '/v2/images', { name, disk_format: formats.disk, container_format: formats.container, visibility: 'private' });
    await this.call(image, 'PUT', `/v2/images/${created.id}/file`, undefined, { raw: data });
    const { status } = await this.call<{ status: string }>(image, 'GET', `/v2/images/${created.id}`);
    if (status !== 'active') throw new Error(`image ${name} is ${status} after its upload`);
    return created.id;
  }
}

/**
 * A project of its own for a test file, with a user that has the `member`
 * and `heat_stack_owner` roles on it (no admin role: it sees only its own
 * servers, ports and networks; with `admin`, the admin role too, as a
 * VIM whose templates make flavors needs), and an application credential; in the
 * shape of KeystoneInfo, so openStackVimConfig (heat.ts) writes its VIM.
 */
export async function createTenant(cloud: RealOpenStackInfo, name: string, opts: { admin?: boolean } = {}): Promise<KeystoneInfo> {
  const admin = CloudClient.admin(cloud);
  const identity = cloud.keystone.url;
  const password = randomSecret();
  const { project } = await admin.call<{ project: { id: string } }>(identity, 'POST', '/projects', { project: { name, domain_id: 'default' } });
  const userName = `${name}-user`;
  const { user } = await admin.call<{ user: { id: string } }>(identity, 'POST', '/users', {
    user: { name: userName, password, domain_id: 'default', default_project_id: project.id },
  });
  for (const role of ['member', 'heat_stack_owner', ...(opts.admin ? ['admin'] : [])]) {
    const { roles } = await admin.call<{ roles: Array<{ id: string }> }>(identity, 'GET', `/roles?name=${role}`);
    if (!roles[0]) throw new Error(`the cloud's Keystone has no role ${role}`);
    await admin.call(identity, 'PUT', `/projects/${project.id}/users/${user.id}/roles/${roles[0].id}`);
  }
  const owner = new CloudClient(cloud, { user: userName, password, project: { id: project.id } });
  const { application_credential: credential } = await owner.call<{ application_credential: { id: string; secret: string } }>(
    identity,
    'POST',
    `/users/${user.id}/application_credentials`,
    { application_credential: { name: `${name}-vnfm` } },
  );
  return {
    url: identity,
    adminPassword: cloud.keystone.adminPassword,
    project: name,
    projectId: project.id,
    user: { name: userName, id: user.id, password, domain: 'Default' },
    appCredential: { id: credential.id, secret: credential.secret },
    region: cloud.keystone.region,
    dir: cloud.dir,
  };
}

/**
 * A qcow2 image of `virtualMiB` that holds no data: a version 2 header and
 * nothing else, which Glance's format inspection reads as qcow2 of that
 * virtual size. Nova's fake driver boots nothing, so no more is needed.
 */
export function emptyQcow2(virtualMiB: number): Buffer {
  const header = Buffer.alloc(512);
  header.write('QFI\xfb', 0, 'latin1');
  header.writeUInt32BE(2, 4); // version
  header.writeUInt32BE(16, 20); // cluster_bits: 64 KiB clusters
  header.writeBigUInt64BE(BigInt(virtualMiB) * 1024n * 1024n, 24); // size
  return header;
}
