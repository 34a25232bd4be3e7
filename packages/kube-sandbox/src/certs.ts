/**
 * TLS material for the sandbox: a self-signed CA and server certificates it
 * signs, all ECDSA P-256 / SHA-256, and the rule for when a kept server
 * certificate must be issued again. Nothing here touches the disk
 * (identity.ts keeps the material when the sandbox is given a state dir).
 *
 * The certificates are DER-encoded here by hand (a few ASN.1 shapes from
 * RFC 5280) and signed with node:crypto, so the sandbox needs neither the
 * `openssl` binary nor an X.509 library at run time. Go's verifier (kubectl)
 * and OpenSSL's (node:tls) both check what is encoded: SAN for the host name,
 * basicConstraints/keyUsage on the CA, extKeyUsage serverAuth on the leaf.
 */
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

/** PEM-encoded TLS material for one sandbox run. */
export interface SandboxCerts {
  /** The CA certificate clients trust (`ssl_ca_cert`, `certificate-authority-data`). */
  caPem: string;
  /** The CA's private key (PKCS#8), kept only when the sandbox keeps its identity. */
  caKeyPem: string;
  /** The server certificate, issued by the CA. */
  certPem: string;
  /** The server's private key (PKCS#8). */
  keyPem: string;
}

export interface CertOptions {
  /** Extra host names or IP addresses the server certificate must be valid for. */
  hosts?: string[];
  /** Validity of the server certificate in days from now (default 365). */
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
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`, 'ascii')) : tlv(0x18, Buffer.from(`${digits}Z`, 'ascii'));
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
  return sequence(set(sequence(objectId(OID.organization), utf8String('vnfm sandbox'))), set(sequence(objectId(OID.commonName), utf8String(commonName))));
}

function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  return critical ? sequence(objectId(oid), booleanTrue(), octetString(value)) : sequence(objectId(oid), octetString(value));
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
  return createHash('sha1')
    .update(spkiDer.subarray(spkiDer.length - 65))
    .digest();
}

interface IssueRequest {
  /** Encoded Names. */
  subject: Buffer;
  issuer: Buffer;
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
    req.issuer,
    sequence(time(req.notBefore), time(req.notAfter)),
    req.subject,
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

/** Hosts every server certificate names, plus `extra`; wildcard listen addresses are not names. */
export function certificateHosts(extra: string[] = []): string[] {
  return [...new Set(['127.0.0.1', '::1', 'localhost', ...extra].filter((h) => h && h !== '0.0.0.0' && h !== '::'))];
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** A CA that signs sandbox server certificates. */
export interface SandboxCa {
  /** The CA certificate (PEM). */
  caPem: string;
  /** The CA's private key (PKCS#8 PEM). */
  caKeyPem: string;
}

/** A server certificate and its key. */
export interface ServerCert {
  certPem: string;
  keyPem: string;
}

/**
 * Makes a fresh self-signed CA, valid for `opts.validityDays` (default
 * 3650: like kubeadm's CA it outlives many server certificates, so a kept
 * sandbox identity stays trusted while its server certificate is renewed).
 */
export function generateSandboxCa(opts: Pick<CertOptions, 'now' | 'validityDays'> = {}): SandboxCa {
  const now = opts.now ?? new Date();
  const ca = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const caKeyId = keyIdentifier(ca.publicKey.export({ type: 'spki', format: 'der' }));
  const caCn = `vnfm-sandbox-ca@${Math.floor(now.getTime() / 1000)}`;
  const caDer = issue({
    subject: distinguishedName(caCn),
    issuer: distinguishedName(caCn),
    subjectKey: ca.publicKey,
    issuerKey: ca.privateKey,
    notBefore: new Date(now.getTime() - 60 * 60 * 1000),
    notAfter: new Date(now.getTime() + (opts.validityDays ?? 3650) * DAY_MS),
    extensions: [
      // digitalSignature | keyCertSign | cRLSign: bits 0, 5, 6 -> 0x86, one unused bit.
      extension(OID.keyUsage, true, bitString(Buffer.from([0x86]), 1)),
      extension(OID.basicConstraints, true, sequence(booleanTrue())),
      extension(OID.subjectKeyIdentifier, false, octetString(caKeyId)),
    ],
  });
  return { caPem: toPem('CERTIFICATE', caDer), caKeyPem: ca.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/** Reads one DER TLV at `offset`: where its content starts and where the whole element ends. */
function readTlv(der: Buffer, offset: number): { tag: number; contentStart: number; end: number } {
  const tag = der[offset]!;
  let length = der[offset + 1]!;
  let contentStart = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + der[contentStart + i]!;
    contentStart += count;
  }
  return { tag, contentStart, end: contentStart + length };
}

/**
 * The subject Name of a certificate, byte for byte: a leaf's issuer must
 * equal it exactly, since verifiers (Go's among them) match issuer to
 * subject on the raw encoding.
 */
function rawSubject(certDer: Buffer): Buffer {
  const tbs = readTlv(certDer, 0);
  let at = readTlv(certDer, tbs.contentStart).contentStart;
  if (readTlv(certDer, at).tag === 0xa0) at = readTlv(certDer, at).end; // version
  for (let i = 0; i < 4; i++) at = readTlv(certDer, at).end; // serial, signature, issuer, validity
  return certDer.subarray(at, readTlv(certDer, at).end);
}

/**
 * Issues a server certificate signed by `ca`, valid for 127.0.0.1, ::1,
 * localhost and every host in `opts.hosts`, for `opts.validityDays`
 * (default 365) but never beyond the CA's own expiry.
 */
export function issueServerCert(ca: SandboxCa, opts: CertOptions = {}): ServerCert {
  const now = opts.now ?? new Date();
  const caCert = new X509Certificate(ca.caPem);
  const caKey = createPrivateKey(ca.caKeyPem);
  const caKeyId = keyIdentifier(caCert.publicKey.export({ type: 'spki', format: 'der' }));
  const server = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const serverKeyId = keyIdentifier(server.publicKey.export({ type: 'spki', format: 'der' }));
  const notAfter = Math.min(now.getTime() + (opts.validityDays ?? 365) * DAY_MS, Date.parse(caCert.validTo));
  const serverDer = issue({
    subject: distinguishedName('vnfm-sandbox-apiserver'),
    issuer: rawSubject(caCert.raw),
    subjectKey: server.publicKey,
    issuerKey: caKey,
    notBefore: new Date(now.getTime() - 60 * 60 * 1000),
    notAfter: new Date(notAfter),
    extensions: [
      // digitalSignature only: bit 0 -> 0x80, seven unused bits.
      extension(OID.keyUsage, true, bitString(Buffer.from([0x80]), 7)),
      extension(OID.extKeyUsage, false, sequence(objectId(OID.serverAuth))),
      extension(OID.basicConstraints, true, sequence()),
      extension(OID.subjectKeyIdentifier, false, octetString(serverKeyId)),
      extension(OID.authorityKeyIdentifier, false, sequence(tlv(0x80, caKeyId))),
      extension(OID.subjectAltName, false, subjectAltNames(certificateHosts(opts.hosts))),
    ],
  });
  return { certPem: toPem('CERTIFICATE', serverDer), keyPem: server.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/** A server certificate is renewed when it has this little validity left. */
export const SERVER_CERT_RENEW_BEFORE_DAYS = 30;

/**
 * Why a kept server certificate cannot serve `hosts` at `now` and must be
 * issued again, or `undefined` when it can: it does not parse, its key does
 * not match, `ca` did not sign it, it does not name every host, or it is not
 * yet valid or expires within {@link SERVER_CERT_RENEW_BEFORE_DAYS} days.
 */
export function serverCertRenewalReason(server: ServerCert, caPem: string, hosts: string[], now: Date = new Date()): string | undefined {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(server.certPem);
    if (!cert.checkPrivateKey(createPrivateKey(server.keyPem))) return 'its key does not match it';
  } catch {
    return 'it cannot be read';
  }
  const ca = new X509Certificate(caPem);
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return 'the CA did not issue it';
  for (const host of certificateHosts(hosts)) {
    const named = isIP(host) ? cert.checkIP(host) : cert.checkHost(host, { subject: 'never' });
    if (named === undefined) return `it does not name ${host}`;
  }
  if (Date.parse(cert.validFrom) > now.getTime()) return 'it is not valid yet';
  if (Date.parse(cert.validTo) - now.getTime() < SERVER_CERT_RENEW_BEFORE_DAYS * DAY_MS) {
    return `it expires within ${SERVER_CERT_RENEW_BEFORE_DAYS} days (${new Date(Date.parse(cert.validTo)).toISOString()})`;
  }
  return undefined;
}

/**
 * Makes a fresh CA and a server certificate valid for 127.0.0.1, ::1,
 * localhost and every host in `opts.hosts`. Nothing touches the disk.
 */
export function generateSandboxCerts(opts: CertOptions = {}): SandboxCerts {
  const ca = generateSandboxCa({ now: opts.now });
  return { ...ca, ...issueServerCert(ca, opts) };
}
