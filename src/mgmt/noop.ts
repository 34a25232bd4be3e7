import type { ManagementDriver } from './index.js';

/** Tacker ships one too: the default when a VNF needs nothing configured after the infra-driver. */
export const noopManagementDriver: ManagementDriver = {
  async runHook() {},
};
