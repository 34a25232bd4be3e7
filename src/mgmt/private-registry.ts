/** The `private-registry-mgmt` built-in driver (seed 004): a Docker private registry on a VM. */
import { VnfmError } from '../errors.js';
import type { BuiltinDriver, ManagementServices } from './builtin.js';

export function createPrivateRegistryDriver(_services: ManagementServices): BuiltinDriver {
  return {
    name: 'private-registry-mgmt',
    hooks: ['instantiate_end', 'heal_end'],
    async runHook() {
      throw new VnfmError('the private-registry-mgmt driver is not available in this build');
    },
  };
}
