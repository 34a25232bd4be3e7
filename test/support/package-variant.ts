/**
 * Another version of a sample package, written to a temporary directory: a
 * new vnfdId, software version, provider or images, with TOSCA.meta's hashes
 * of the changed files recomputed. For tests of moving an instance between
 * packages (vnf-update with a vnfdId).
 */
import { createHash } from 'node:crypto';
import { appendFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

export interface Variant {
  /** The sample's vnfdId, replaced everywhere in Definitions/. */
  fromVnfdId: string;
  vnfdId: string;
  /** Replaces the sample's '1.0' in Definitions/. */
  softwareVersion?: string;
  /** Replaces the provider named in the VNFD (`vnfm samples`). */
  provider?: string;
  /** Text replacements in the package's files (an image tag, say). */
  replace?: [string, string][];
  /** Files to add (path in the package, text), listed in TOSCA.meta. */
  add?: [string, string][];
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : [join(dir, n)]));
}

export function packageVariant(sample: string, v: Variant): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'vnfm-pkg-variant-')), 'package');
  cpSync(sample, dir, { recursive: true });
  for (const path of files(dir)) {
    const rel = relative(dir, path);
    if (rel.startsWith('TOSCA-Metadata')) continue;
    let text = readFileSync(path, 'utf8');
    if (rel.startsWith('Definitions')) {
      text = text.split(v.fromVnfdId).join(v.vnfdId);
      if (v.softwareVersion) text = text.split("'1.0'").join(`'${v.softwareVersion}'`);
      if (v.provider) text = text.split('vnfm samples').join(v.provider);
    }
    for (const [from, to] of v.replace ?? []) text = text.split(from).join(to);
    writeFileSync(path, text);
  }
  for (const [path, text] of v.add ?? []) writeFileSync(join(dir, path), text);
  const metaPath = join(dir, 'TOSCA-Metadata', 'TOSCA.meta');
  for (const [path] of v.add ?? []) appendFileSync(metaPath, `\nName: ${path}\nContent-Type: application/yaml\nAlgorithm: SHA-256\nHash: 0\n`);
  const meta = readFileSync(metaPath, 'utf8').replace(/Name: (\S+)\n((?:(?!Hash:).*\n)*?)Hash: [0-9a-f]+/g, (_m, name: string, mid: string) => {
    const hash = createHash('sha256')
      .update(readFileSync(join(dir, name)))
      .digest('hex');
    return `Name: ${name}\n${mid}Hash: ${hash}`;
  });
  writeFileSync(metaPath, meta);
  // A SOL004 manifest at the root lists hashes too (`Source:` … `Hash:`).
  for (const mf of readdirSync(dir).filter((n) => n.endsWith('.mf'))) {
    const text = readFileSync(join(dir, mf), 'utf8').replace(/Source: (\S+)\n((?:(?!Hash:).*\n)*?)Hash: [0-9a-f]+/g, (_m, name: string, mid: string) => {
      const hash = createHash('sha256')
        .update(readFileSync(join(dir, name)))
        .digest('hex');
      return `Source: ${name}\n${mid}Hash: ${hash}`;
    });
    writeFileSync(join(dir, mf), text);
  }
  return dir;
}
