// The generated CNF package the lifecycle benchmarks onboard: the given
// Kubernetes objects under Files/kubernetes/ (one file per key), one VDU per
// Deployment, one instantiation level with one replica each, and a VNFD in
// the three files Tacker's samples use (types, flavour, top).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';

export const yamlDocs = (list) => list.map((o) => yaml.dump(o, { lineWidth: -1 })).join('---\n');

/**
 * The manifests of a CNF of `n` objects (n a multiple of 50): per 50, 10
 * Deployments (one per VDU, each with its ConfigMap, Secret and Service),
 * 5 ServiceAccounts and 5 StatefulSets (1 replica, no VDU).
 */
export function cnfObjects(n) {
  const k = n / 50;
  const range = (count) => Array.from({ length: count }, (_, i) => i + 1);
  const vdus = 10 * k;
  return {
    'deployments.yaml': range(vdus).map((i) => {
      const labels = { app: `vdu${i}` };
      return {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: `vdu${i}`, labels },
        spec: {
          replicas: 1,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              serviceAccountName: `sa${((i - 1) % (5 * k)) + 1}`,
              containers: [
                {
                  name: 'web',
                  image: 'docker.io/library/nginx:1.26-alpine',
                  ports: [{ name: 'http', containerPort: 80 }],
                  envFrom: [{ configMapRef: { name: `config${i}` } }, { secretRef: { name: `secret${i}` } }],
                },
              ],
            },
          },
        },
      };
    }),
    'services.yaml': range(10 * k).map((i) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: `svc${i}` },
      spec: { selector: { app: `vdu${i}` }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    })),
    'configmaps.yaml': range(10 * k).map((i) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `config${i}` },
      data: { GREETING: `hello from ${i}`, LOG_LEVEL: 'info' },
    })),
    'secrets.yaml': range(10 * k).map((i) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `secret${i}` }, type: 'Opaque', stringData: { API_TOKEN: `token-${i}` } })),
    'serviceaccounts.yaml': range(5 * k).map((i) => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: `sa${i}` } })),
    'statefulsets.yaml': range(5 * k).map((i) => {
      const labels = { app: `store${i}` };
      return {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: `store${i}`, labels },
        spec: {
          replicas: 1,
          serviceName: `svc${i}`,
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: 'store', image: 'docker.io/library/busybox:1.36', command: ['sleep', 'infinity'] }] } },
        },
      };
    }),
  };
}

/**
 * Writes the package's directory. `objects`: file name → objects, with the
 * Deployments under 'deployments.yaml'; `prefix` names the VNFD files;
 * `nodeType` the VNF's node type. Returns the files written under
 * Files/kubernetes/ and that directory.
 */
export function writeCnfPackage(dir, { objects, descriptorId, nodeType, prefix }) {
  const objectCount = Object.values(objects).reduce((n, list) => n + list.length, 0);
  const vduCount = objects['deployments.yaml'].length;
  const files = join(dir, 'Files', 'kubernetes');
  mkdirSync(files, { recursive: true });
  mkdirSync(join(dir, 'TOSCA-Metadata'));
  mkdirSync(join(dir, 'Definitions'));
  for (const [name, list] of Object.entries(objects)) writeFileSync(join(files, name), yamlDocs(list));
  writeFileSync(
    join(dir, 'TOSCA-Metadata', 'TOSCA.meta'),
    `TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: vnfm bench\nEntry-Definitions: Definitions/${prefix}_top.vnfd.yaml\n`,
  );
  const imports = ['etsi_nfv_sol001_common_types.yaml', 'etsi_nfv_sol001_vnfd_types.yaml'];
  writeFileSync(
    join(dir, 'Definitions', `${prefix}_types.yaml`),
    `tosca_definitions_version: tosca_simple_yaml_1_2
imports: ${JSON.stringify(imports)}
node_types:
  ${nodeType}:
    derived_from: tosca.nodes.nfv.VNF
    properties:
      descriptor_id: { type: string, default: ${descriptorId} }
      descriptor_version: { type: string, default: '1.0' }
      provider: { type: string, default: vnfm bench }
      product_name: { type: string, default: CNF of ${objectCount} objects }
      software_version: { type: string, default: '1.0' }
      vnfm_info: { type: list, entry_schema: { type: string }, default: [ Tacker ] }
      flavour_id: { type: string, default: simple }
      flavour_description: { type: string, default: '' }
    interfaces:
      Vnflcm:
        type: tosca.interfaces.nfv.Vnflcm
`,
  );
  const vdus = Array.from({ length: vduCount }, (_, i) => i + 1);
  writeFileSync(
    join(dir, 'Definitions', `${prefix}_df_simple.yaml`),
    `tosca_definitions_version: tosca_simple_yaml_1_2
imports: ${JSON.stringify([...imports, `${prefix}_types.yaml`])}
topology_template:
  substitution_mappings:
    node_type: ${nodeType}
    properties:
      flavour_id: simple
  node_templates:
    VNF:
      type: ${nodeType}
      properties:
        flavour_description: ${vduCount} Deployments, one per VDU
${vdus
  .map(
    (i) => `    VDU${i}:
      type: tosca.nodes.nfv.Vdu.Compute
      properties:
        name: vdu${i}
        description: Deployment vdu${i}
        vdu_profile: { min_number_of_instances: 1, max_number_of_instances: 1 }
`,
  )
  .join('')}  policies:
    - instantiation_levels:
        type: tosca.policies.nfv.InstantiationLevels
        properties:
          levels:
            instantiation_level_1:
              description: One replica of each VDU
          default_level: instantiation_level_1
    - vdu_instantiation_levels:
        type: tosca.policies.nfv.VduInstantiationLevels
        properties:
          levels:
            instantiation_level_1:
              number_of_instances: 1
        targets: ${JSON.stringify(vdus.map((i) => `VDU${i}`))}
`,
  );
  writeFileSync(
    join(dir, 'Definitions', `${prefix}_top.vnfd.yaml`),
    `tosca_definitions_version: tosca_simple_yaml_1_2
description: A generated CNF of ${objectCount} Kubernetes objects, for benchmarks
imports: ${JSON.stringify([...imports, `${prefix}_types.yaml`, `${prefix}_df_simple.yaml`])}
topology_template:
  inputs:
    selected_flavour:
      type: string
  node_templates:
    VNF:
      type: ${nodeType}
      properties:
        flavour_id: { get_input: selected_flavour }
        descriptor_id: ${descriptorId}
        provider: vnfm bench
        product_name: CNF of ${objectCount} objects
        software_version: '1.0'
        descriptor_version: '1.0'
        vnfm_info: [ Tacker ]
`,
  );
  return { files: Object.keys(objects), manifests: files };
}
