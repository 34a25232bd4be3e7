/** What vnf-list narrows to, as the SQL conditions of a list's read. */
import type { VnfInstance } from '../model/lcm.js';
import type { Dialect } from './dialect.js';

/** What vnf-list narrows to; `name` may hold glob characters (`*`, `?`, `[...]`). */
export interface VnfInstanceFilter {
  state?: VnfInstance['instantiationState'];
  vimId?: string;
  vnfPkgId?: string;
  name?: string;
}

export function whereOf(filter: VnfInstanceFilter, d: Dialect): { where: string[]; params: Record<string, string | number> } {
  const where: string[] = [];
  const params: Record<string, string | number> = {};
  if (filter.state) {
    where.push('i.instantiation_state = @state');
    params['state'] = filter.state;
  }
  if (filter.vimId) {
    // The VIM named at instantiation, or one given inline in vimConnectionInfo.
    where.push(`(i.vim_id = @vimId OR EXISTS (SELECT 1 FROM json_each(${d.json('vim_connection_info')}) WHERE value ->> 'vimId' = @vimId))`);
    params['vimId'] = filter.vimId;
  }
  if (filter.vnfPkgId) {
    where.push('i.vnf_pkg_id = @vnfPkgId');
    params['vnfPkgId'] = filter.vnfPkgId;
  }
  if (filter.name) {
    where.push(/[*?[]/.test(filter.name) ? d.glob('i.name', '@name') : 'i.name = @name');
    params['name'] = filter.name;
  }
  return { where, params };
}
