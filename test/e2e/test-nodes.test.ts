/**
 * The simulated VMs of test/support/nodes.ts: their own addresses, sshd,
 * users and files.
 */
import { NodeSSH } from 'node-ssh';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeNetwork, type NodeNetwork, type TestNode } from '../support/nodes.js';

let net: NodeNetwork;
let a: TestNode;
let b: TestNode;

async function sshRun(node: TestNode, user: string, password: string, cmd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const ssh = new NodeSSH();
  await ssh.connect({ host: node.address, username: user, password, readyTimeout: 10_000 });
  try {
    return await ssh.execCommand(cmd);
  } finally {
    ssh.dispose();
  }
}

beforeAll(async () => {
  net = await createNodeNetwork();
  [a, b] = await Promise.all([net.node('node-a', net.prefix + '0.10'), net.node('node-b', net.prefix + '0.11')]);
});
afterAll(async () => {
  await net?.close();
});

describe('test nodes', () => {
  it('have their own addresses, host keys, hostnames and files, and take ssh logins by password', async () => {
    expect(a.address).not.toBe(b.address);
    expect(await a.hostKeyFingerprint()).toMatch(/^SHA256:/);
    expect(await a.hostKeyFingerprint()).not.toBe(await b.hostKeyFingerprint());

    const r = await sshRun(a, 'ubuntu', 'ubuntu', 'hostname; ip -4 -o addr show eth0; sudo -n id -u; echo hello > ~/f');
    expect(r.code).toBe(0);
    const [host, addr, uid] = r.stdout.split('\n');
    expect(host).toBe('node-a');
    expect(addr).toContain(`${a.address}/16`);
    expect(uid).toBe('0');
    expect(a.file('/home/ubuntu/f')).toBe('hello\n');
    expect(b.file('/home/ubuntu/f')).toBeUndefined();
    expect((await b.run('hostname')).stdout).toBe('node-b\n');

    await expect(sshRun(b, 'ubuntu', 'wrong', 'true')).rejects.toThrow(/authentication/i);
  });
});
