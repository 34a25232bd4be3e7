/**
 * The software images a VNFD describes (`sw_image_data` of a Vdu.Compute or
 * a VirtualBlockStorage, with its image artifact): each checksum of an image
 * the package carries becomes a hash declaration, checked with the
 * manifest's in the same reading of the member (hashes.ts); an image given
 * by URL is noted, as vnfm neither fetches nor checks it.
 */
import type { Finding } from '../model/package-files.js';
import type { SwImage, Vnfd } from '../vnfd/index.js';
import { IMAGE_CHECKSUM_ALGORITHMS, algorithmLabel, digestLength, isHexDigest, parseImageChecksumAlgorithm, type HashDeclaration } from './hashes.js';

export interface ImageChecksums {
  declarations: HashDeclaration[];
  findings: Finding[];
}

/** Every node of every flavour with sw_image_data, once each (a node in two flavours' files is two nodes). */
export function swImageNodes(vnfd: Vnfd): Array<{ node: string; image: SwImage }> {
  const out: Array<{ node: string; image: SwImage }> = [];
  const seen = new Set<string>();
  for (const flavour of Object.values(vnfd.flavours)) {
    for (const [node, holder] of [...Object.entries(flavour.vdus), ...Object.entries(flavour.storages)]) {
      const image = holder.swImage;
      const key = `${image?.source?.file ?? flavour.file}\u0000${node}`;
      if (!image || seen.has(key)) continue;
      seen.add(key);
      out.push({ node, image });
    }
  }
  return out;
}

/** The hash declarations of the images the package carries, and the findings about checksums that cannot be checked. */
export function imageChecksums(vnfd: Vnfd): ImageChecksums {
  const declarations: HashDeclaration[] = [];
  const findings: Finding[] = [];
  for (const { node, image } of swImageNodes(vnfd)) {
    const at = { file: image.source?.file ?? vnfd.topFile, ...(image.source?.line !== undefined ? { line: image.source.line } : {}) };
    if (image.url !== undefined) {
      findings.push({
        severity: 'info',
        code: 'sw-image-external',
        ...at,
        message: `the image of ${node} is ${image.url}, outside the package: vnfm neither fetches nor checks it, and does not upload it to the VIM`,
        hint: `the image named ${image.name} must exist in the VIM's Glance when ${node} is instantiated; or ship the image in the package (Files/images/) to have it checked and uploaded`,
      });
      continue;
    }
    if (image.file === undefined) continue;
    const checksum = image.checksum;
    if (!checksum) {
      findings.push({
        severity: 'warning',
        code: 'sw-image-checksum-missing',
        ...at,
        message: `the sw_image_data of ${node} has no checksum: ${image.file} is not checked against it`,
        hint: `add checksum: {algorithm: sha-512, hash: <the image's SHA-512>} to the sw_image_data of ${node} (SOL001 requires it)`,
      });
      continue;
    }
    const algorithm = parseImageChecksumAlgorithm(checksum.algorithm);
    if (!algorithm) {
      findings.push({
        severity: 'warning',
        code: 'sw-image-checksum-unsupported',
        ...at,
        message: `the sw_image_data of ${node} gives its checksum in ${JSON.stringify(checksum.algorithm)}, which vnfm cannot compute: ${image.file} is not checked`,
        hint: `write the checksum in one of ${IMAGE_CHECKSUM_ALGORITHMS}`,
      });
      continue;
    }
    const hash = checksum.hash.trim();
    if (!isHexDigest(algorithm, hash)) {
      findings.push({
        severity: 'error',
        code: 'sw-image-checksum-invalid',
        ...at,
        message: `the sw_image_data of ${node} declares the ${algorithmLabel(algorithm)} ${JSON.stringify(checksum.hash)}, which is not a ${algorithmLabel(algorithm)} digest (hexadecimal, ${digestLength(algorithm)} digits): no image can match it`,
        hint: `set checksum.hash of ${node} to the ${algorithmLabel(algorithm)} of ${image.file} (e.g. ${algorithm}sum ${image.file})`,
      });
      continue;
    }
    declarations.push({ path: image.file, algorithm, expected: hash, declaredIn: at.file, ...(at.line !== undefined ? { line: at.line } : {}), node });
  }
  return { declarations, findings };
}
