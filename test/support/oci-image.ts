/**
 * Container images for the registry tests, made without a network: a
 * one-layer OCI image layout written by hand, and skopeo to move it.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

/** skopeo with no signature policy (test images are unsigned). */
export const skopeo = (args: string[]): string => execFileSync('skopeo', ['--insecure-policy', ...args], { stdio: 'pipe', encoding: 'utf8', timeout: 60_000 });

/** Writes an OCI image layout at `dir` (tag v1) whose one layer holds ./hello.txt with `text`. */
export function makeOciImage(dir: string, text: string): void {
  const scratch = mkdtempSync(join(tmpdir(), 'vnfm-oci-'));
  try {
    const src = join(scratch, 'layer-src');
    mkdirSync(src, { recursive: true });
    writeFileSync(join(src, 'hello.txt'), text);
    const layerFile = join(scratch, 'layer.tar.gz');
    execFileSync('tar', ['-C', src, '-czf', layerFile, '.']);
    const layer = readFileSync(layerFile);
    const diffId = sha256(execFileSync('gzip', ['-dc', layerFile]));
    const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', config: {}, rootfs: { type: 'layers', diff_ids: [`sha256:${diffId}`] } }));
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: `sha256:${sha256(config)}`, size: config.length },
        layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: `sha256:${sha256(layer)}`, size: layer.length }],
      }),
    );
    mkdirSync(join(dir, 'blobs', 'sha256'), { recursive: true });
    for (const blob of [layer, config, manifest]) writeFileSync(join(dir, 'blobs', 'sha256', sha256(blob)), blob);
    writeFileSync(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
    writeFileSync(
      join(dir, 'index.json'),
      JSON.stringify({
        schemaVersion: 2,
        manifests: [
          {
            mediaType: 'application/vnd.oci.image.manifest.v1+json',
            digest: `sha256:${sha256(manifest)}`,
            size: manifest.length,
            annotations: { 'org.opencontainers.image.ref.name': 'v1' },
          },
        ],
      }),
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
