/**
 * The sandbox through the real kubectl 1.32, for what the API fidelity work
 * added: `auth whoami` and `auth can-i` (protobuf review bodies), `explain`
 * of a custom kind (its CRD schema in OpenAPI v3) and of the built-in kinds
 * described whole, `apply` with their merge keys, `get -o wide` with the
 * wide columns after Age, and the new built-in kinds in `get`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, writeSandboxConfigs, type Sandbox } from '../../src/sandbox/index.js';

const KUBECTL = '/usr/bin/kubectl';

let sb: Sandbox;
let dir: string;
let kubeconfig: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vnfm-sandbox-kubectl-more-'));
  sb = await startSandbox({ controllers: { readyDelayMs: 20 } });
  kubeconfig = join(dir, 'kubeconfig');
  writeSandboxConfigs(sb, { kubeconfigPath: kubeconfig });
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function kubectl(args: string[], input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(KUBECTL, args, { env: { PATH: process.env['PATH'], HOME: dir, KUBECONFIG: kubeconfig }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

describe('kubectl against the sandbox', () => {
  it('says who the token is and what it may do', async () => {
    const whoami = await kubectl(['auth', 'whoami']);
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(whoami.stdout).toMatch(/Username\s+admin/);
    expect(whoami.stdout).toMatch(/Groups\s+\[system:masters system:authenticated\]/);
    const canI = await kubectl(['auth', 'can-i', 'delete', 'pods', '-n', 'default']);
    expect(canI.code, canI.stderr).toBe(0);
    expect(canI.stdout.trim()).toBe('yes');
    const list = await kubectl(['auth', 'can-i', '--list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);
  });

  it("explains a custom kind from its CRD's schema", async () => {
    const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.demo.example.com}
spec:
  group: demo.example.com
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: A widget of the demo.
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, description: How big the widget is.}
`;
    expect((await kubectl(['apply', '-f', '-'], crd)).code).toBe(0);
    let explained = { code: null as number | null, stdout: '', stderr: '' };
    for (let i = 0; i < 30; i++) {
      explained = await kubectl(['explain', 'widget.spec.size']);
      if (explained.code === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(explained.code, explained.stderr).toBe(0);
    expect(explained.stdout).toMatch(/FIELD:\s+size <integer>/);
    expect(explained.stdout).toContain('How big the widget is.');
  });

  it('explains the built-in kinds it describes whole, and applies them with the merge keys of their schema', async () => {
    const explained = await kubectl(['explain', 'configmap.data']);
    expect(explained.code, explained.stderr).toBe(0);
    expect(explained.stdout).toMatch(/FIELD:\s+data <map\[string\]string>/);
    const owners = await kubectl(['explain', 'serviceaccount.metadata.ownerReferences']);
    expect(owners.code, owners.stderr).toBe(0);
    expect(owners.stdout).toMatch(/FIELD:\s+ownerReferences <\[\]Object>/);
    // A client-side apply builds its strategic merge patch from the served schema: secrets merge by name.
    const account = (secret: string): string =>
      `apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: robot, namespace: default}\nsecrets: [{name: ${secret}}]\nautomountServiceAccountToken: false\n`;
    const first = await kubectl(['apply', '-f', '-'], account('one'));
    expect(first.code, first.stderr).toBe(0);
    const added = await kubectl(['patch', 'serviceaccount', 'robot', '-n', 'default', '--type', 'strategic', '-p', '{"secrets":[{"name":"two"}]}']);
    expect(added.code, added.stderr).toBe(0);
    const second = await kubectl(['apply', '-f', '-'], account('three'));
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toBe('');
    const got = await kubectl(['get', 'serviceaccount', 'robot', '-n', 'default', '-o', 'jsonpath={.secrets[*].name}']);
    // The applied list replaces the one it applied before and keeps what another writer added.
    expect(got.stdout.split(' ').sort()).toEqual(['three', 'two']);
  });

  it('prints the wide columns after Age and lists the new built-in kinds', async () => {
    const nodes = await kubectl(['get', 'nodes', '-o', 'wide']);
    expect(nodes.code, nodes.stderr).toBe(0);
    expect(nodes.stdout.split('\n')[0]!.split(/\s{2,}/)).toEqual([
      'NAME',
      'STATUS',
      'ROLES',
      'AGE',
      'VERSION',
      'INTERNAL-IP',
      'EXTERNAL-IP',
      'OS-IMAGE',
      'KERNEL-VERSION',
      'CONTAINER-RUNTIME',
    ]);
    const apiServices = await kubectl(['get', 'apiservices', 'v1.apps']);
    expect(apiServices.code, apiServices.stderr).toBe(0);
    expect(apiServices.stdout).toMatch(/v1\.apps\s+Local\s+True/);
    for (const kind of [
      'replicationcontrollers',
      'csidrivers',
      'certificatesigningrequests',
      'validatingwebhookconfigurations',
      'flowschemas',
      'runtimeclasses',
      'ingressclasses',
    ]) {
      const r = await kubectl(['get', kind]);
      expect(r.code, `${kind}: ${r.stderr}`).toBe(0);
    }
  });
});
