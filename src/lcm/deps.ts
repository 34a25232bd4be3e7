/**
 * What the lcm use cases need from outside (the store, the drivers, the
 * keyring, the clock) and the progress they report: the cli supplies the
 * real ones, tests their own.
 */
import type { Sleep } from '../clock.js';
import type { DriverEvent } from '../infra/driver.js';
import type { KubernetesInfraDriver } from '../infra/kubernetes/driver-contract.js';
import type { OpenStackInfraDriver } from '../infra/openstack/driver-contract.js';
import type { SecretReader } from '../infra/kubernetes/secrets.js';
import type { ManagementDriver, Open, Seal } from '../mgmt/index.js';
import type { LcmOpOcc, VimConnection } from '../model/lcm.js';
import type { Store } from '../store/index.js';
import type { Vim, VimSecrets } from '../vim/index.js';
import type { LcmHook } from '../vnfd/index.js';
import type { HostFacts } from './lock-holder.js';
import type { HelmServices } from './planners/helm.js';

/** What the engine needs from outside; the cli supplies the real ones, tests their own. */
export interface LcmDeps {
  store: Store;
  /** VNFM_HOME, where onboarded packages are unpacked. */
  home: string;
  now(): Date;
  /**
   * The one waiter (clock.ts): the infra-drivers built for the operations
   * pause through it between polls and retries. The real one when absent;
   * tests give their own so that nothing waits for real.
   */
  sleep?: Sleep;
  /** Decrypts a registered VIM's secrets (needs the keyring). */
  openVimSecrets(vim: Vim): Promise<VimSecrets>;
  /** The Kubernetes infra-driver for a VIM. */
  kubernetesDriver(vim: VimConnection): KubernetesInfraDriver | Promise<KubernetesInfraDriver>;
  /** The OpenStack (Heat) infra-driver for a VIM; operations on OpenStack VIMs fail without it. */
  openstackDriver?(vim: VimConnection): OpenStackInfraDriver | Promise<OpenStackInfraDriver>;
  /** Hooks around the infra-driver; the no-op driver when absent. */
  mgmt?: ManagementDriver;
  /** Reads Secrets on a VIM (vnf-kubeconfig). */
  secretReader?(vim: VimConnection): Promise<SecretReader>;
  /** Seals the credentials of an inline VIM kept with an instance (vnfm's keyring); without it they are not kept. */
  seal?: Seal;
  /** Opens what `seal` sealed. */
  open?: Open;
  /**
   * Contacts a VIM with its credentials; throws VimCheckError (exit 6) when it
   * does not answer or refuses them. Asked for an inline VIM when the request
   * is read, and for a registered one before every new operation is recorded
   * (a VIM's status from registration or vim-check may be stale).
   */
  checkInlineVim?(vim: VimConnection): Promise<void>;
  /**
   * --insecure-inline-vims: the operator accepts Tacker's behaviour for an
   * inline Kubernetes VIM without interfaceInfo.ssl_ca_cert whose certificate
   * neither the CA of a registered VIM with the same endpoint nor the
   * system's trusted CAs verify: it is used without TLS verification, and
   * `warn` is told so, naming the endpoint, each time. Absent: such a VIM is
   * refused (exit 6) with the fix.
   */
  insecureInlineVims?: { warn(message: string): void };
  /** The pid recorded in locks (this process's by default); its host, boot and start time are read from this host. */
  pid?: number;
  /** How a lock's holder is checked: this host's facts by default (see lock-holder.ts). */
  host?: HostFacts;
  /** Helm, for the Helm planner (planners/helm.ts); operations on a Helm CNF fail without it. */
  helm?: HelmServices;
}

/** Progress of an operation, for the cli's live view or log lines. */
export type LcmEvent =
  | { type: 'occurrence'; opOcc: LcmOpOcc }
  | { type: 'driver'; event: DriverEvent }
  | { type: 'hook'; hook: LcmHook }
  /** A line a hook's package script or remote command printed, as its log keeps it (secrets redacted). */
  | { type: 'output'; hook: LcmHook; line: string }
  | { type: 'notice'; message: string };
