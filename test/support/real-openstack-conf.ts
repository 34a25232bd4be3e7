/**
 * The configuration files of the real OpenStack tier's services
 * (real-openstack.ts): Keystone, Heat, Placement, Glance, Neutron (ML2 with
 * the Linux bridge mechanism driver) and Nova (fake virt driver). All listen
 * on the namespace's 127.0.0.1, keep their data in one private PostgreSQL
 * reached by its socket, log into the cloud's log directory, and talk over a
 * RabbitMQ on the namespace's loopback (Heat, in one process, over
 * oslo.messaging's in-process transport). Nothing under /etc is written;
 * the services read only the packaged paste files there.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

/** Every service's TCP port; each is also the host's port the relay carries to it. */
export interface CloudPorts {
  keystone: number;
  heat: number;
  nova: number;
  neutron: number;
  glance: number;
  placement: number;
}

export interface CloudLayout {
  /** The cloud's directory: configs, state, logs (`log/`). */
  dir: string;
  ports: CloudPorts;
  /** PostgreSQL's socket directory and port (no TCP listener). */
  pgSocketDir: string;
  pgPort: number;
  /** Nova's compute host and the Linux bridge agent's host: port binding needs the two to match. */
  computeHost: string;
  region: string;
  /** Passwords of the service users (`heat`, `nova`, ...) and of `heat_domain_admin`. */
  passwords: Record<'heat' | 'heatDomainAdmin' | 'nova' | 'neutron' | 'glance' | 'placement', string>;
}

/** RabbitMQ's guest account works only over loopback, which is all there is. */
export const TRANSPORT_URL = 'rabbit://guest:guest@127.0.0.1:5672/';

export const keystoneUrl = (l: CloudLayout): string => `http://127.0.0.1:${l.ports.keystone}/v3`;
export const logDir = (l: CloudLayout): string => join(l.dir, 'log');

export function pgUrl(l: CloudLayout, database: string): string {
  return `postgresql+psycopg2://postgres@/${database}?host=${l.pgSocketDir}&port=${l.pgPort}`;
}

/** `[section]` with the password credentials of service user `user` on the `service` project. */
function serviceAuth(l: CloudLayout, section: string, user: keyof CloudLayout['passwords']): string {
  return `[${section}]
auth_url = ${keystoneUrl(l)}
www_authenticate_uri = ${keystoneUrl(l)}
auth_type = password
project_domain_name = Default
user_domain_name = Default
project_name = service
username = ${user}
password = ${l.passwords[user]}
region_name = ${l.region}
interface = public
valid_interfaces = public
`;
}

const common = (l: CloudLayout, name: string) => `log_file = ${join(logDir(l), `${name}.log`)}
use_stderr = false
`;

export function keystoneConf(l: CloudLayout): string {
  const keys = join(l.dir, 'keystone');
  return `[DEFAULT]
${common(l, 'keystone')}
[database]
connection = ${pgUrl(l, 'keystone')}

[token]
provider = fernet

[fernet_tokens]
key_repository = ${join(keys, 'fernet-keys')}

[fernet_receipts]
key_repository = ${join(keys, 'fernet-keys')}

[credential]
key_repository = ${join(keys, 'credential-keys')}
`;
}

/** heat-all (API and one engine in one process) over the in-process fake:// transport, as test/support/heat.ts runs it. */
export function heatConf(l: CloudLayout): string {
  const unversioned = keystoneUrl(l).replace(/\/v3$/, '');
  const heatUser = `auth_type = password
auth_url = ${unversioned}
username = heat
password = ${l.passwords.heat}
user_domain_name = Default`;
  return `[DEFAULT]
${common(l, 'heat')}transport_url = fake://
num_engine_workers = 1
host = vnfm-cloud-heat
graceful_shutdown_timeout = 2
region_name_for_services = ${l.region}
auth_encryption_key = ${randomBytes(16).toString('hex')}
stack_user_domain_name = heat
stack_domain_admin = heat_domain_admin
stack_domain_admin_password = ${l.passwords.heatDomainAdmin}
heat_metadata_server_url = http://127.0.0.1:${l.ports.heat}
heat_waitcondition_server_url = http://127.0.0.1:${l.ports.heat}/v1/waitcondition

[heat_all]
enabled_services = api,engine

[heat_api]
bind_host = 127.0.0.1
bind_port = ${l.ports.heat}
workers = 1

[database]
connection = ${pgUrl(l, 'heat')}

[oslo_messaging_notifications]
driver = noop

[keystone_authtoken]
www_authenticate_uri = ${keystoneUrl(l)}
interface = public
${heatUser}
project_name = service
project_domain_name = Default

[trustee]
${heatUser}

[clients_keystone]
auth_uri = ${unversioned}

[clients]
endpoint_type = public
`;
}

export function placementConf(l: CloudLayout): string {
  return `[DEFAULT]
${common(l, 'placement')}
[api]
auth_strategy = keystone

[placement_database]
connection = ${pgUrl(l, 'placement')}

${serviceAuth(l, 'keystone_authtoken', 'placement')}`;
}

/** glance-api's file store under `store` (images, staging, tasks), behind Keystone, without notifications: every test Glance's. */
export function glanceFileStore(store: string): string {
  return `[glance_store]
default_backend = fs

[fs]
filesystem_store_datadir = ${join(store, 'images')}

[os_glance_staging_store]
filesystem_store_datadir = ${join(store, 'staging')}

[os_glance_tasks_store]
filesystem_store_datadir = ${join(store, 'tasks')}

[paste_deploy]
flavor = keystone
config_file = /etc/glance/glance-api-paste.ini

[oslo_messaging_notifications]
driver = noop

`;
}

export function glanceConf(l: CloudLayout): string {
  const store = join(l.dir, 'glance');
  return `[DEFAULT]
${common(l, 'glance-api')}bind_host = 127.0.0.1
bind_port = ${l.ports.glance}
workers = 1
enabled_backends = fs:file
transport_url = ${TRANSPORT_URL}

[database]
connection = ${pgUrl(l, 'glance')}

${glanceFileStore(store)}[oslo_concurrency]
lock_path = ${join(l.dir, 'lock')}

${serviceAuth(l, 'keystone_authtoken', 'glance')}`;
}

/**
 * neutron-server with ML2 and one process per role; it does not tell Nova
 * about port changes (Nova waits for no plug event, see novaConf). Its host
 * is the compute host, whose Linux bridge agent binds the ports.
 */
export function neutronConf(l: CloudLayout): string {
  return `[DEFAULT]
use_stderr = false
bind_host = 127.0.0.1
bind_port = ${l.ports.neutron}
core_plugin = ml2
service_plugins =
auth_strategy = keystone
api_workers = 1
rpc_workers = 1
rpc_state_report_workers = 1
transport_url = ${TRANSPORT_URL}
state_path = ${join(l.dir, 'neutron')}
api_paste_config = /etc/neutron/api-paste.ini
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = false
dhcp_agent_notification = false
host = ${l.computeHost}

[database]
connection = ${pgUrl(l, 'neutron')}

[experimental]
linuxbridge = true

[agent]
root_helper = sudo
report_interval = 10

[oslo_concurrency]
lock_path = ${join(l.dir, 'lock')}

[oslo_messaging_notifications]
driver = noop

${serviceAuth(l, 'keystone_authtoken', 'neutron')}
${serviceAuth(l, 'nova', 'nova')}`;
}

/**
 * ML2: tenant networks of type `local` (VLAN devices cannot be made in this
 * kernel), bound by the Linux bridge agent, which is given the namespace's
 * veth `phys0`; no firewall.
 */
export function ml2Conf(): string {
  return `[ml2]
type_drivers = local,flat
tenant_network_types = local
mechanism_drivers = linuxbridge
extension_drivers = port_security

[ml2_type_flat]
flat_networks = physnet1

[securitygroup]
enable_security_group = true
firewall_driver = noop

[linux_bridge]
physical_interface_mappings = physnet1:phys0

[vxlan]
enable_vxlan = false
`;
}

/**
 * Nova's API, conductor, scheduler and one compute with the fake virt driver
 * (real API, scheduling and placement; no hypervisor: servers go ACTIVE and
 * nothing boots). The scheduler does not look for new compute hosts by
 * itself: the cloud runs `discover_hosts` once the compute node exists.
 * One file for the four services and nova-manage; each names its log file
 * on its command line (as neutron-server and its agent do).
 */
export function novaConf(l: CloudLayout): string {
  return `[DEFAULT]
use_stderr = false
transport_url = ${TRANSPORT_URL}
compute_driver = fake.FakeDriver
host = ${l.computeHost}
my_ip = 127.0.0.1
state_path = ${join(l.dir, 'nova')}
enabled_apis = osapi_compute
osapi_compute_listen = 127.0.0.1
osapi_compute_listen_port = ${l.ports.nova}
osapi_compute_workers = 1
vif_plugging_is_fatal = false
vif_plugging_timeout = 0
graceful_shutdown_timeout = 5
# One compute host: a resize (a change of flavour) stays on it.
allow_resize_to_same_host = true

[api]
auth_strategy = keystone

[wsgi]
api_paste_config = /etc/nova/api-paste.ini

[api_database]
connection = ${pgUrl(l, 'nova_api')}

[database]
connection = ${pgUrl(l, 'nova')}

[conductor]
workers = 1

[scheduler]
workers = 1
discover_hosts_in_cells_interval = -1

[oslo_concurrency]
lock_path = ${join(l.dir, 'lock')}

[oslo_messaging_notifications]
driver = noop

[glance]
region_name = ${l.region}
valid_interfaces = public

[cinder]
os_region_name = ${l.region}

${serviceAuth(l, 'keystone_authtoken', 'nova')}
${serviceAuth(l, 'placement', 'placement')}
${serviceAuth(l, 'neutron', 'neutron')}`;
}
