/**
 * What the API server assigns a Service: a cluster IP from the service range
 * (or the one it asks for, if free) and node ports, kept across updates.
 */
import { goStrings, invalid } from '../status.js';
import type { ResourceStrategy } from '../resources.js';
import * as d from './defaults.js';
import { spec, type Obj } from './kind-def.js';

/** Per-sandbox allocators for what the API server assigns on create. */
export interface Allocators {
  clusterIp(): string;
  /** Takes an address a Service asks for; an error message when it cannot (`failed to allocate IP ...`). */
  claimClusterIp(ip: string): string | undefined;
  nodePort(): number;
}

/** The service range of the sandbox, as `--service-cluster-ip-range` sets it on an API server. */
export const SERVICE_CIDR = '10.96.0.0/12';

function ipv4(ip: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return undefined;
  return ((parts[0]! << 24) >>> 0) + (parts[1]! << 16) + (parts[2]! << 8) + parts[3]!;
}

const isIpv6 = (ip: string): boolean => ip.includes(':') && /^[0-9a-fA-F:.]+$/.test(ip);

export function newAllocators(): Allocators {
  const [base, bits] = SERVICE_CIDR.split('/') as [string, string];
  const first = ipv4(base)!;
  const size = 2 ** (32 - Number(bits));
  const used = new Set<number>();
  let nextIp = 10;
  let nextPort = 30000;
  const show = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
  return {
    clusterIp() {
      while (used.has(first + nextIp)) nextIp++;
      const n = first + nextIp++;
      used.add(n);
      return show(n);
    },
    claimClusterIp(ip) {
      const n = ipv4(ip);
      if (n === undefined || n <= first || n >= first + size - 1) {
        return `failed to allocate IP ${ip}: the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${SERVICE_CIDR}`;
      }
      if (used.has(n)) return `failed to allocate IP ${ip}: provided IP is already allocated`;
      used.add(n);
      return undefined;
    },
    nodePort() {
      return nextPort++;
    },
  };
}

export function serviceStrategy(alloc: Allocators): ResourceStrategy {
  return {
    applyDefaults: d.defaultService,
    prepareForCreate(o) {
      const s = spec(o);
      if (s.type !== 'ExternalName') {
        if (s.clusterIP && s.clusterIP !== 'None') {
          const ip = String(s.clusterIP);
          if (ipv4(ip) === undefined && !isIpv6(ip)) {
            throw invalid('Service', '', o.metadata.name, [
              { type: 'FieldValueInvalid', field: 'spec.clusterIPs[0]', value: ip, detail: 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)' },
            ]);
          }
          const problem = alloc.claimClusterIp(ip);
          if (problem)
            throw invalid('Service', '', o.metadata.name, [{ type: 'FieldValueInvalid', field: 'spec.clusterIPs', value: [ip], goValue: goStrings([ip]), detail: problem }]);
        }
        if (!s.clusterIP) s.clusterIP = alloc.clusterIp();
        s.clusterIPs = [s.clusterIP];
        if (s.clusterIP !== 'None') {
          s.ipFamilies ??= ['IPv4'];
          s.ipFamilyPolicy ??= 'SingleStack';
        }
        if (s.type === 'NodePort' || s.type === 'LoadBalancer') {
          for (const p of (s.ports as Obj[] | undefined) ?? []) p.nodePort ??= alloc.nodePort();
        }
      }
      o.status = { loadBalancer: {} };
    },
    prepareForUpdate(o, old) {
      // As the Service REST storage does: allocated values carry over when the update leaves them out.
      const s = spec(o);
      const before = spec(old);
      s.clusterIP ??= before.clusterIP;
      s.clusterIPs ??= before.clusterIPs;
      if (before.ipFamilies) s.ipFamilies ??= before.ipFamilies;
      if (before.ipFamilyPolicy) s.ipFamilyPolicy ??= before.ipFamilyPolicy;
      for (const p of (s.ports as Obj[] | undefined) ?? []) {
        const was = ((before.ports as Obj[] | undefined) ?? []).find((q) => q.port === p.port && (q.protocol ?? 'TCP') === (p.protocol ?? 'TCP'));
        if (was?.nodePort && (s.type === 'NodePort' || s.type === 'LoadBalancer')) p.nodePort ??= was.nodePort;
      }
      const ips = Array.isArray(s.clusterIPs) ? (s.clusterIPs as string[]) : [String(s.clusterIP)];
      if ((s.clusterIP !== before.clusterIP || ips[0] !== before.clusterIP) && before.clusterIP) {
        throw invalid('Service', '', o.metadata.name, [
          { type: 'FieldValueInvalid', field: 'spec.clusterIPs[0]', value: ips, goValue: goStrings(ips.map(String)), detail: 'may not change once set' },
        ]);
      }
    },
  };
}
