import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../src/csar/manifest.js';
import { parseToscaMeta } from '../../src/csar/tosca-meta.js';

const H256 = 'a'.repeat(64);
const codes = (fs: { code: string; line?: number; severity: string }[]) => fs.map((f) => `${f.severity}:${f.code}@${f.line ?? '-'}`);

describe('TOSCA.meta', () => {
  it('reads a Tacker-style file with Created-by and file blocks', () => {
    const text = [
      'TOSCA-Meta-File-Version: 1.0',
      'CSAR-Version: 1.1',
      'Created-by: Onboarding portal',
      'Entry-Definitions: Definitions/sample_vnfd_top.yaml',
      'ETSI-Entry-Manifest: manifest.mf',
      '',
      'Name: Files/images/cirros.img',
      'Content-Type: application/x-iso9066-image',
      '',
      'Name: Scripts/install.sh',
      'Content-Type: test-data',
      'Algorithm: SHA-256',
      `Hash: ${H256}`,
      '',
    ].join('\n');
    const { meta, findings } = parseToscaMeta(text);
    expect(findings).toEqual([]);
    expect(meta).toMatchObject({
      fileVersion: '1.0',
      csarVersion: '1.1',
      createdBy: 'Onboarding portal',
      entryDefinitions: 'Definitions/sample_vnfd_top.yaml',
      entryManifest: 'manifest.mf',
    });
    expect(meta.entries).toEqual([
      { name: 'Files/images/cirros.img', path: 'Files/images/cirros.img', contentType: 'application/x-iso9066-image', line: 7, lastLine: 8 },
      {
        name: 'Scripts/install.sh',
        path: 'Scripts/install.sh',
        contentType: 'test-data',
        algorithm: 'SHA-256',
        hash: H256,
        line: 10,
        algorithmLine: 12,
        hashLine: 13,
        lastLine: 13,
      },
    ]);
  });

  it('accepts CRLF, a BOM, Created-By, ./ paths and algorithms in any case', () => {
    const text =
      '\ufeffTOSCA-Meta-File-Version: 1.0\r\nCSAR-Version: 1.1\r\nCreated-By: x\r\nEntry-Definitions: ./Definitions/top.yaml\r\n\r\nName: ./Files/a\r\nAlgorithm: sha-512\r\nHash: ' +
      'B'.repeat(128) +
      '\r\n';
    const { meta, findings } = parseToscaMeta(text);
    expect(findings).toEqual([]);
    expect(meta.entryDefinitions).toBe('Definitions/top.yaml');
    expect(meta.entries[0]).toMatchObject({ path: 'Files/a', algorithm: 'sha-512', hashLine: 8 });
  });

  it('starts a new block at Name: even without an empty line', () => {
    const { meta, findings } = parseToscaMeta('TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: x\nEntry-Definitions: a.yaml\nName: b\nContent-Type: t\nName: c\n');
    expect(findings).toEqual([]);
    expect(meta.entries.map((e) => e.name)).toEqual(['b', 'c']);
  });

  it('joins continuation lines', () => {
    const { meta } = parseToscaMeta(`TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: x\nEntry-Definitions: Definitions/very\n _long.yaml\n`);
    expect(meta.entryDefinitions).toBe('Definitions/very_long.yaml');
  });

  it.each([
    ['no Entry-Definitions', 'TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: x\n', ['error:tosca-meta-missing-key@1']],
    ['an empty Entry-Definitions', 'TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: x\nEntry-Definitions:\n', ['error:tosca-meta-missing-key@4']],
    ['SOL004 keys missing', 'Entry-Definitions: a.yaml\n', ['warning:tosca-meta-missing-key@1', 'warning:tosca-meta-missing-key@1', 'warning:tosca-meta-missing-key@1']],
    [
      'a manifest not ending in .mf',
      'TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: x\nEntry-Definitions: a.yaml\nETSI-Entry-Manifest: manifest.yaml\n',
      ['error:manifest-name@5'],
    ],
    ['an escaping Entry-Definitions', 'TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: x\nEntry-Definitions: ../a.yaml\n', ['error:zip-slip@4']],
    ['a wrongly cased key', 'TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: x\nentry-definitions: a.yaml\n', ['warning:tosca-meta-key-case@4']],
    [
      'a duplicate key',
      'TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: x\nEntry-Definitions: a.yaml\nEntry-Definitions: b.yaml\n',
      ['error:tosca-meta-duplicate-key@5'],
    ],
    ['a line that is not Key: value', 'TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: x\nEntry-Definitions: a.yaml\njust words\n', ['error:tosca-meta-syntax@5']],
    [
      'an unsupported algorithm',
      `TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: x\nEntry-Definitions: a.yaml\n\nName: f\nAlgorithm: SHA256\nHash: ${H256}\n`,
      ['error:hash-algorithm-unsupported@7'],
    ],
    [
      'MD5',
      `TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: x\nEntry-Definitions: a.yaml\n\nName: f\nAlgorithm: MD5\nHash: ${'a'.repeat(32)}\n`,
      ['error:hash-algorithm-unsupported@7'],
    ],
    [
      'a short hash',
      'TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: x\nEntry-Definitions: a.yaml\n\nName: f\nAlgorithm: SHA-384\nHash: abc\n',
      ['error:hash-malformed@8'],
    ],
    [
      'an Algorithm without Hash',
      'TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: x\nEntry-Definitions: a.yaml\n\nName: f\nAlgorithm: SHA-256\n',
      ['error:artifact-block-incomplete@7'],
    ],
    [
      'a block without Name',
      `TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: x\nEntry-Definitions: a.yaml\n\nContent-Type: x\nHash: ${H256}\n`,
      ['error:artifact-block-incomplete@6'],
    ],
    ['an old file version', 'TOSCA-Meta-File-Version: 2.0\nCSAR-Version: 1.1\nCreated-By: x\nEntry-Definitions: a.yaml\n', ['warning:tosca-meta-version@1']],
  ])('reports %s', (_name, text, expected) => {
    expect(codes(parseToscaMeta(text).findings)).toEqual(expected);
  });
});

describe('manifest', () => {
  const metadata =
    'metadata:\n  vnf_provider_id: Company\n  vnf_product_name: Sample VNF\n  vnf_release_date_time: 2020-01-01T10:00:00+09:00\n  vnf_package_version: 1.0\n  compatible_specification_versions: 2.6.1\n';

  it('reads metadata, Source blocks, URLs, non-MANO sets and a signature', () => {
    const text = [
      metadata,
      'Source: Definitions/top.yaml',
      'Algorithm: sha-256',
      `Hash: ${H256}`,
      '',
      'Source: https://example.com/image.qcow2',
      'Algorithm: SHA-256',
      `Hash: ${H256}`,
      '',
      'non_mano_artifact_sets:',
      '  onap_ves_events:',
      '    Source: Files/Events/ves.yaml',
      '',
      '-----BEGIN CMS-----',
      'MIIB...',
      '-----END CMS-----',
      '',
    ].join('\n');
    const { manifest, findings } = parseManifest(text, 'manifest.mf');
    expect(codes(findings)).toEqual(['info:manifest-signature-not-verified@-']);
    expect(manifest.metadata).toEqual({
      vnf_provider_id: 'Company',
      vnf_product_name: 'Sample VNF',
      vnf_release_date_time: '2020-01-01T10:00:00+09:00',
      vnf_package_version: '1.0',
      compatible_specification_versions: '2.6.1',
    });
    expect(manifest.artifacts).toMatchObject([
      { source: 'Definitions/top.yaml', path: 'Definitions/top.yaml', external: false, line: 8, hashLine: 10 },
      { source: 'https://example.com/image.qcow2', external: true },
    ]);
    expect(manifest.nonManoArtifactSets).toEqual({ onap_ves_events: [{ path: 'Files/Events/ves.yaml', line: 18 }] });
    expect(manifest.signed).toBe(true);
  });

  it('reads CRLF manifests', () => {
    const { manifest, findings } = parseManifest(`${metadata}\nSource: a\nAlgorithm: SHA-224\nHash: ${'c'.repeat(56)}\n`.replace(/\n/g, '\r\n'), 'm.mf');
    expect(findings).toEqual([]);
    expect(manifest.artifacts[0]).toMatchObject({ path: 'a', algorithm: 'SHA-224' });
  });

  it.each([
    ['no metadata', `Source: a\nAlgorithm: SHA-256\nHash: ${H256}\n`, ['warning:manifest-metadata-missing@1']],
    ['incomplete metadata', 'metadata:\n  vnf_provider_id: C\n', ['warning:manifest-metadata-missing@1']],
    ['a bad release date', metadata.replace('2020-01-01T10:00:00+09:00', 'yesterday'), ['warning:manifest-metadata-invalid@1']],
    ['a Source without hash', `${metadata}\nSource: a\n`, ['warning:hash-missing@8']],
    ['a Source with Hash but no Algorithm', `${metadata}\nSource: a\nHash: ${H256}\n`, ['error:artifact-block-incomplete@9']],
    ['an escaping Source', `${metadata}\nSource: ../../etc/passwd\nAlgorithm: SHA-256\nHash: ${H256}\n`, ['error:zip-slip@8']],
    ['an unknown algorithm', `${metadata}\nSource: a\nAlgorithm: SHA3-256\nHash: ${H256}\n`, ['error:hash-algorithm-unsupported@9']],
    ['a key outside a block', `${metadata}\nAlgorithm: SHA-256\n`, ['error:artifact-block-incomplete@8']],
    ['stray indentation', `${metadata}\nSource: a\n  Algorithm: SHA-256\n`, ['error:manifest-syntax@9', 'warning:hash-missing@8']],
  ])('reports %s', (_name, text, expected) => {
    expect(codes(parseManifest(text, 'm.mf').findings)).toEqual(expected);
  });
});
