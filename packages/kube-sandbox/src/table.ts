/**
 * Server-side printing: the `meta.k8s.io` `Table` kubectl asks for with
 * `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`. Columns are Name,
 * the kind's own columns and Age, the wide (priority 1) ones last, as the
 * API server's table convertors lay them out; `includeObject` chooses what
 * each row carries.
 */
import type { KubeObject, ResourceType, TableColumn } from './resources.js';

const NAME_COLUMN = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace. Cannot be updated.',
  priority: 0,
};
const AGE_COLUMN = {
  name: 'Age',
  type: 'string',
  format: '',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  priority: 0,
};

/**
 * An age as kubectl shows it (apimachinery's duration.HumanDuration):
 * seconds up to 2m, then minutes (with seconds under 10m), hours, days, years.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${hours / 24}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const years = Math.floor(hours / 24 / 365);
    const days = Math.floor(hours / 24) % 365;
    return days === 0 ? `${years}y` : `${years}y${days}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

/** What each row's `object` carries (`includeObject`): nothing, PartialObjectMetadata (the default) or the object itself. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface TableOptions {
  includeObject?: IncludeObject;
  /** List metadata besides the resourceVersion (`continue`, `remainingItemCount`). */
  listMeta?: Record<string, unknown>;
  /** The object as served (with kind and apiVersion), for `includeObject=Object`. */
  served?: (obj: KubeObject) => KubeObject;
}

/**
 * The column layout of the API server's printers: Name, the kind's
 * priority-0 columns, Age, the priority-0 columns it prints after Age, then
 * the wide (priority 1) ones.
 */
function layout(type: ResourceType): { columns: TableColumn[]; ageAt: number } {
  const own = type.columns ?? [];
  const before = own.filter((c) => c.priority === 0 && !c.afterAge);
  const after = own.filter((c) => c.priority === 0 && c.afterAge);
  const wide = own.filter((c) => c.priority !== 0);
  return { columns: [...before, ...after, ...wide], ageAt: type.noAgeColumn ? -1 : before.length };
}

/** Builds a Table of `objects`; `tableVersion` is the meta.k8s.io version the client asked for. */
export function toTable(type: ResourceType, objects: KubeObject[], resourceVersion: string, now: Date, tableVersion: string, opts: TableOptions = {}): object {
  const { columns, ageAt } = layout(type);
  const definitions: object[] = [NAME_COLUMN, ...columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description, priority: c.priority }))];
  if (ageAt >= 0) definitions.splice(ageAt + 1, 0, AGE_COLUMN);
  const include = opts.includeObject ?? 'Metadata';
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${tableVersion}`,
    metadata: { resourceVersion, ...opts.listMeta },
    columnDefinitions: definitions,
    rows: objects.map((obj) => {
      const created = obj.metadata.creationTimestamp ? Date.parse(obj.metadata.creationTimestamp) : undefined;
      const cells: unknown[] = [obj.metadata.name, ...columns.map((c) => c.cell(obj))];
      if (ageAt >= 0) cells.splice(ageAt + 1, 0, created === undefined ? '<unknown>' : humanDuration(now.getTime() - created));
      const object =
        include === 'None'
          ? null
          : include === 'Object' && opts.served
            ? opts.served(obj)
            : { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${tableVersion}`, metadata: obj.metadata };
      return { cells, object };
    }),
  };
}
