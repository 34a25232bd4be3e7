/**
 * Tacker's container-update management drivers (v2
 * `container_update_mgmt_v2.py`, v1 `container_update_mgmt.py`), as
 * Tacker's container-update packages name them on their
 * modify_information_start/end hooks. Tacker runs the script, which patches
 * the containers' images and the ConfigMaps/Secrets of
 * `metadata.configmap_secret_paths`; in vnfm that work is part of the modify
 * operation itself (lcm/modify.ts), so this driver only says so. Such a
 * script imports Tacker's own modules and could not run outside Tacker: no
 * consent is asked for it and nothing is run.
 */
import type { BuiltinDriver } from './builtin.js';

export function createContainerUpdateDriver(name: string): BuiltinDriver {
  return {
    name,
    hooks: ['modify_information_start', 'modify_information_end'],
    async runHook(ctx) {
      if (ctx.hook === 'modify_information_start') {
        ctx.report(`${ctx.hook}: Tacker's container update driver (${ctx.implementation?.artifactFile ?? name}): vnfm updates the containers itself`);
      }
    },
  };
}
