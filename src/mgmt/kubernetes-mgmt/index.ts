/** The `kubernetes-mgmt` built-in driver (seed 004): a Kubernetes cluster on VMs with kubeadm, and its registry connections. */
import { VnfmError } from '../../errors.js';
import type { BuiltinDriver, ManagementServices } from '../builtin.js';

export function createKubernetesMgmtDriver(_services: ManagementServices): BuiltinDriver {
  return {
    name: 'kubernetes-mgmt',
    hooks: [],
    async runHook() {
      throw new VnfmError('the kubernetes-mgmt driver is not available in this build');
    },
  };
}
