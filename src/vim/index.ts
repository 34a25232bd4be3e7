/**
 * VIMs: the Kubernetes clusters and OpenStack projects VNFs run on.
 * Read from Tacker's vim-config.yaml, a kubeconfig or clouds.yaml, checked
 * for real, stored with their secrets sealed.
 */
export type { Vim, VimAuth, VimConfig, VimSecrets, VimSpec, VimType } from '../model/vim.js';
export { listVims, getVim, resolveVims, deleteVims, openSecrets, sealSecrets } from './vims.js';
export type { VimChecker, VimCheckReport } from './check.js';
export type { VimDeps, VimSource, RegisterVimOptions, UpdateVimOptions } from './register.js';
