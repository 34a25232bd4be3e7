/**
 * Server-side printing: the `meta.k8s.io` `Table` kubectl asks for with
 * `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`. Columns are Name,
 * the kind's own columns, then Age, as the API server's table convertors
 * lay them out.
 */
import type { KubeObject, ResourceType } from './resources.js';

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

/** Builds a Table of `objects`; `tableVersion` is the meta.k8s.io version the client asked for. */
export function toTable(type: ResourceType, objects: KubeObject[], resourceVersion: string, now: Date, tableVersion: string): object {
  const columns = type.columns ?? [];
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${tableVersion}`,
    metadata: { resourceVersion },
    columnDefinitions: [
      NAME_COLUMN,
      ...columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description, priority: c.priority })),
      AGE_COLUMN,
    ],
    rows: objects.map((obj) => {
      const created = obj.metadata.creationTimestamp ? Date.parse(obj.metadata.creationTimestamp) : undefined;
      return {
        cells: [
          obj.metadata.name,
          ...columns.map((c) => c.cell(obj)),
          created === undefined ? '<unknown>' : humanDuration(now.getTime() - created),
        ],
        object: { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${tableVersion}`, metadata: obj.metadata },
      };
    }),
  };
}
