/**
 * In-memory TLS material for the sandbox: a self-signed CA and a server
 * certificate it signs, both ECDSA P-256 / SHA-256.
 *
 * The certificates are DER-encoded here by hand (a few ASN.1 shapes from
 * RFC 5280) and signed with node:crypto, so the sandbox needs neither the
 * `openssl` binary nor an X.509 library at run time. Go's verifier (kubectl)
 * and OpenSSL's (node:tls) both check what is encoded: SAN for the host name,
 * basicConstraints/keyUsage on the CA, extKeyUsage serverAuth on the leaf.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

/** PEM-encoded TLS material for one sandbox run. */
export interface SandboxCerts {
  /** The CA certificate clients trust (`ssl_ca_cert`, `certificate-authority-data`). */
  caPem: string;
  /** The server certificate, issued by the CA. */
  certPem: string;
  /** The server's private key (PKCS#8). */
  keyPem: string;
}

export interface CertOptions {
  /** Extra host names or IP addresses the server certificate must be valid for. */
  hosts?: string[];
  /** Validity in days from now (default 365). */
  validityDays?: number;
  /** The moment the certificates start to be valid (default: now, minus an hour for clock skew). */
  now?: Date;
}

// ---- minimal DER encoding -------------------------------------------------

function encodeLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), encodeLength(content.length), content]);
}

const sequence = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
const octetString = (content: Buffer): Buffer => tlv(0x04, content);
const utf8String = (text: string): Buffer => tlv(0x0c, Buffer.from(text, 'utf8'));
const explicit = (n: number, content: Buffer): Buffer => tlv(0xa0 + n, content);
const booleanTrue = (): Buffer => Buffer.from([0x01, 0x01, 0xff]);

/** A BIT STRING whose content is whole bytes (signatures, key identifiers). */
const bitString = (content: Buffer, unusedBits = 0): Buffer => tlv(0x03, Buffer.concat([Buffer.from([unusedBits]), content]));

function unsignedInteger(value: Buffer): Buffer {
  let bytes = value;
  while (bytes.length > 1 && bytes[0] === 0 && (bytes[1]! & 0x80) === 0) bytes = bytes.subarray(1);
  if ((bytes[0]! & 0x80) !== 0) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return tlv(0x02, bytes);
}

function objectId(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const out: number[] = [40 * arcs[0]! + arcs[1]!];
  for (const arc of arcs.slice(2)) {
    const chunk: number[] = [arc & 0x7f];
    for (let n = Math.floor(arc / 128); n > 0; n = Math.floor(n / 128)) chunk.unshift(0x80 | (n & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime until 2049, GeneralizedTime after, as RFC 5280 4.1.2.5 requires. */
function time(date: Date): Buffer {
  const iso = date.toISOString(); // 2024-01-02T03:04:05.678Z
  const digits = iso.slice(0, 19).replace(/[-T:]/g, ''); // 20240102030405
  return date.getUTCFullYear() < 2050
    ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`, 'ascii'))
    : tlv(0x18, Buffer.from(`${digits}Z`, 'ascii'));
}

// ---- X.509 pieces ---------------------------------------------------------

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
} as const;

const signatureAlgorithm = (): Buffer => sequence(objectId(OID.ecdsaWithSha256));

function distinguishedName(commonName: string): Buffer {
  return sequence(
    set(sequence(objectId(OID.organization), utf8String('vnfm sandbox'))),
    set(sequence(objectId(OID.commonName), utf8String(commonName))),
  );
}

function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  return critical
    ? sequence(objectId(oid), booleanTrue(), octetString(value))
    : sequence(objectId(oid), octetString(value));
}

function subjectAltNames(hosts: string[]): Buffer {
  const names = hosts.map((host) => {
    if (isIP(host) === 4) return tlv(0x87, Buffer.from(host.split('.').map(Number)));
    if (isIP(host) === 6) return tlv(0x87, ipv6Bytes(host));
    return tlv(0x82, Buffer.from(host, 'ascii'));
  });
  return sequence(...names);
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail] = address.includes('::') ? address.split('::') : [address, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  return Buffer.from([...headGroups, ...zeros, ...tailGroups].flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]));
}

/** SHA-1 of the subjectPublicKey bits, RFC 5280 4.2.1.2 method (1). */
function keyIdentifier(spkiDer: Buffer): Buffer {
  // For an EC P-256 key the SPKI is SEQUENCE { AlgorithmIdentifier, BIT STRING(0x00 || point) }
  // and the uncompressed point is the last 65 bytes.
  return createHash('sha1').update(spkiDer.subarray(spkiDer.length - 65)).digest();
}

interface IssueRequest {
  subjectCn: string;
  issuerCn: string;
  subjectKey: KeyObject;
  issuerKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
  extensions: Buffer[];
}

function issue(req: IssueRequest): Buffer {
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x40; // positive and exactly 16 bytes
  const tbs = sequence(
    explicit(0, unsignedInteger(Buffer.from([2]))), // v3
    unsignedInteger(serial),
    signatureAlgorithm(),
    distinguishedName(req.issuerCn),
    sequence(time(req.notBefore), time(req.notAfter)),
    distinguishedName(req.subjectCn),
    req.subjectKey.export({ type: 'spki', format: 'der' }),
    explicit(3, sequence(...req.extensions)),
  );
  const signature = sign('sha256', tbs, { key: req.issuerKey, dsaEncoding: 'der' });
  return sequence(tbs, signatureAlgorithm(), bitString(signature));
}

function toPem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/**
 * Makes a fresh CA and a server certificate valid for 127.0.0.1, ::1,
 * localhost and every host in `opts.hosts`. Nothing touches the disk.
 */
export function generateSandboxCerts(opts: CertOptions = {}): SandboxCerts {
  const now = opts.now ?? new Date();
  const notBefore = new Date(now.getTime() - 60 * 60 * 1000);
  const notAfter = new Date(now.getTime() + (opts.validityDays ?? 365) * 24 * 60 * 60 * 1000);
  const hosts = [...new Set(['127.0.0.1', '::1', 'localhost', ...(opts.hosts ?? [])].filter((h) => h && h !== '0.0.0.0' && h !== '::'))];

  const ca = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const server = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const caKeyId = keyIdentifier(ca.publicKey.export({ type: 'spki', format: 'der' }));
  const serverKeyId = keyIdentifier(server.publicKey.export({ type: 'spki', format: 'der' }));
  const caCn = `vnfm-sandbox-ca@${Math.floor(now.getTime() / 1000)}`;

  const caDer = issue({
    subjectCn: caCn,
    issuerCn: caCn,
    subjectKey: ca.publicKey,
    issuerKey: ca.privateKey,
    notBefore,
    notAfter,
    extensions: [
      // digitalSignature | keyCertSign | cRLSign: bits 0, 5, 6 -> 0x86, one unused bit.
      extension(OID.keyUsage, true, bitString(Buffer.from([0x86]), 1)),
      extension(OID.basicConstraints, true, sequence(booleanTrue())),
      extension(OID.subjectKeyIdentifier, false, octetString(caKeyId)),
    ],
  });
  const serverDer = issue({
    subjectCn: 'vnfm-sandbox-apiserver',
    issuerCn: caCn,
    subjectKey: server.publicKey,
    issuerKey: ca.privateKey,
    notBefore,
    notAfter,
    extensions: [
      // digitalSignature only: bit 0 -> 0x80, seven unused bits.
      extension(OID.keyUsage, true, bitString(Buffer.from([0x80]), 7)),
      extension(OID.extKeyUsage, false, sequence(objectId(OID.serverAuth))),
      extension(OID.basicConstraints, true, sequence()),
      extension(OID.subjectKeyIdentifier, false, octetString(serverKeyId)),
      extension(OID.authorityKeyIdentifier, false, sequence(tlv(0x80, caKeyId))),
      extension(OID.subjectAltName, false, subjectAltNames(hosts)),
    ],
  });

  return {
    caPem: toPem('CERTIFICATE', caDer),
    certPem: toPem('CERTIFICATE', serverDer),
    keyPem: server.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}
