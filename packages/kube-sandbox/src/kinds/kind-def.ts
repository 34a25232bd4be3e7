/**
 * How a built-in kind is declared: a short definition (group, kind, which
 * subresources, columns, strategy) turned into the ResourceType the generic
 * handlers serve, and the column and field helpers the kind tables share.
 */
import { fieldLabelNotSupported, formatSelector, METADATA_FIELDS, type FieldGetter, type LabelSelectorObject, type SelectableFields } from '../selectors.js';
import type { KubeObject, ResourceStrategy, ResourceType, SubresourceType, TableColumn, Verb } from '../resources.js';

/** Every verb the generic handlers serve. */
export const ALL_VERBS: Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
export const STATUS = { name: 'status', verbs: ['get', 'patch', 'update'] as Verb[] };
export const SCALE = { name: 'scale', verbs: ['get', 'patch', 'update'] as Verb[], responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' } };

export type Obj = Record<string, any>;

export interface KindDef {
  group: string;
  version: string;
  kind: string;
  plural?: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  status?: boolean;
  scale?: boolean;
  generation?: boolean;
  columns?: TableColumn[];
  strategy?: ResourceStrategy;
  returnDeletedObject?: boolean;
  fields?: SelectableFields;
  noAgeColumn?: boolean;
  extraSubresources?: SubresourceType[];
}

/** Selectable fields of a kind with its own field-label conversion: metadata.name/namespace and `more`. */
export function ownFields(more: Record<string, FieldGetter>, opts: { clusterScoped?: boolean; unsupported?: (field: string) => string } = {}): SelectableFields {
  const fields = { ...METADATA_FIELDS, ...more };
  if (opts.clusterScoped) delete fields['metadata.namespace'];
  return { fields, unsupported: opts.unsupported ?? fieldLabelNotSupported };
}

export const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));

export function define(def: KindDef): ResourceType {
  const plural = def.plural ?? `${def.kind.toLowerCase()}s`;
  const type: ResourceType = {
    group: def.group,
    version: def.version,
    kind: def.kind,
    listKind: `${def.kind}List`,
    plural,
    singular: def.kind.toLowerCase(),
    namespaced: def.namespaced,
    verbs: ALL_VERBS,
    nameRule: 'dns1123-subdomain',
    strategicMerge: true,
  };
  if (def.shortNames) type.shortNames = def.shortNames;
  if (def.categories) type.categories = def.categories;
  const subresources = [...(def.status ? [STATUS] : []), ...(def.scale ? [SCALE] : []), ...(def.extraSubresources ?? [])];
  if (subresources.length) type.subresources = subresources;
  if (def.scale) {
    type.scale = {
      specReplicasPath: 'spec.replicas',
      statusReplicasPath: 'status.replicas',
      labelSelector: (o) => formatSelector((o.spec as Obj | undefined)?.selector as LabelSelectorObject | undefined),
    };
  }
  if (def.generation) type.generation = true;
  if (def.columns) type.columns = def.columns;
  if (def.strategy) type.strategy = def.strategy;
  if (def.returnDeletedObject) type.returnDeletedObject = true;
  if (def.fields) type.selectableFields = def.fields;
  if (def.noAgeColumn) type.noAgeColumn = true;
  return type;
}

export const col = (name: string, cell: (o: Obj) => unknown, type: TableColumn['type'] = 'string', priority = 0): TableColumn => ({
  name,
  type,
  description: name,
  priority,
  cell: cell as (o: KubeObject) => unknown,
});

/** The wide columns of workloads: their template's containers and images, and their selector. */
export function templateColumns(selector: boolean, templateOf: (o: Obj) => Obj | undefined = (o) => spec(o).template as Obj | undefined): TableColumn[] {
  const containers = (o: Obj): Obj[] => ((templateOf(o)?.spec as Obj | undefined)?.containers as Obj[] | undefined) ?? [];
  const cols = [
    col(
      'Containers',
      (o) =>
        containers(o)
          .map((c) => c.name)
          .join(','),
      'string',
      1,
    ),
    col(
      'Images',
      (o) =>
        containers(o)
          .map((c) => c.image)
          .join(','),
      'string',
      1,
    ),
  ];
  if (selector) {
    cols.push(
      col(
        'Selector',
        (o) => {
          const sel = spec(o).selector as Obj | undefined;
          if (sel && (sel.matchLabels || sel.matchExpressions)) return formatSelector(sel as LabelSelectorObject) || '<none>';
          return (
            Object.entries((sel as Record<string, string> | undefined) ?? {})
              .map(([k, v]) => `${k}=${v}`)
              .join(',') || '<none>'
          );
        },
        'string',
        1,
      ),
    );
  }
  return cols;
}

/** The `Created At` column some kinds print instead of Age. */
export const createdAt: TableColumn = {
  name: 'Created At',
  type: 'date',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  priority: 0,
  cell: (o) => o.metadata.creationTimestamp,
};

export const spec = (o: Obj): Obj => (o.spec as Obj | undefined) ?? {};
export const status = (o: Obj): Obj => (o.status as Obj | undefined) ?? {};
