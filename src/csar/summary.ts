import type { Vnfd } from '../vnfd/index.js';
import type { PackageSummary } from '../model/package.js';

/** What `vnfpkg-show` prints about a VNFD, derived once at onboarding. */
export function summarizeVnfd(vnfd: Vnfd, members: string[], kubernetesDefinitions: string[]): PackageSummary {
  return {
    flavours: Object.values(vnfd.flavours).map((f) => ({
      id: f.id,
      ...(f.description ? { description: f.description } : {}),
      vdus: Object.values(f.vdus).map((v) => ({
        id: v.nodeName,
        name: v.name,
        min: v.vduProfile.minNumberOfInstances,
        max: v.vduProfile.maxNumberOfInstances,
      })),
      aspects: Object.values(f.aspects).map((a) => ({ id: a.id, maxScaleLevel: a.maxScaleLevel, vdus: Object.keys(a.vduDeltas) })),
      instantiationLevels: Object.values(f.instantiationLevels).map((l) => ({ id: l.id, vduInstances: l.vduInstances })),
      ...(f.defaultLevel ? { defaultLevel: f.defaultLevel } : {}),
      hooks: Object.fromEntries(Object.entries(f.hooks).map(([hook, impl]) => [hook, impl.artifactFile ?? impl.implementation])),
    })),
    artifacts: members.filter((m) => m.startsWith('Files/') || m.startsWith('Scripts/') || m.startsWith('BaseHOT/')),
    kubernetesDefinitions,
  };
}
