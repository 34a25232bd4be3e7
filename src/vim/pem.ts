/**
 * Checking PEM certificate bundles (a VIM's CA, a kubeconfig's client
 * certificate) before they are stored, so a pasted-wrong certificate fails at
 * registration and not at the first TLS handshake.
 */
import { X509Certificate } from 'node:crypto';

const BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * Returns each `-----BEGIN CERTIFICATE-----` block of `text`, in order, each
 * checked to be a parseable X.509 certificate. Throws a plain Error naming the
 * block (by number and line) that failed; callers wrap it with the file and
 * field it came from.
 */
export function parsePemCertificates(text: string): string[] {
  const normalized = text.replace(/\r\n?/g, '\n');
  // A private key in a certificate bundle is almost always a copy-paste
  // mistake, and storing it would spread a secret where nobody expects one.
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(normalized)) {
    throw new Error('contains a PRIVATE KEY block; only certificates belong here');
  }
  const blocks = [...normalized.matchAll(BLOCK)];
  if (blocks.length === 0) {
    const begins = (normalized.match(/-----BEGIN CERTIFICATE-----/g) ?? []).length;
    throw new Error(
      begins > 0 ? 'has a -----BEGIN CERTIFICATE----- line without its -----END CERTIFICATE----- line' : 'contains no -----BEGIN CERTIFICATE----- block (not a PEM certificate)',
    );
  }
  const unterminated = (normalized.match(/-----BEGIN CERTIFICATE-----/g) ?? []).length - blocks.length;
  if (unterminated > 0) {
    throw new Error(`has ${unterminated} -----BEGIN CERTIFICATE----- line(s) without a matching END line`);
  }
  return blocks.map((m, i) => {
    const block = m[0];
    const line = normalized.slice(0, m.index).split('\n').length;
    try {
      new X509Certificate(block);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new Error(`certificate ${i + 1} of ${blocks.length} (starting on line ${line}) is not a valid X.509 certificate: ${reason}`);
    }
    return block;
  });
}

/**
 * Rebuilds PEM text that YAML folded into one line. Tacker's docs write
 * `ssl_ca_cert: "-----BEGIN CERTIFICATE-----` over several lines inside double
 * quotes, which YAML reads as one line with spaces where the line breaks
 * were; Tacker then turns every whitespace character back into a line break
 * and re-joins the `BEGIN CERTIFICATE` / `END CERTIFICATE` markers
 * (tacker/sol_refactored/infra_drivers/kubernetes/kubernetes_utils.py,
 * AuthContextManager._create_ca_cert_file). Text that is already proper PEM
 * (each marker on its own line) is returned unchanged; `folded` says whether
 * a repair was made.
 */
export function unfoldPem(text: string): { text: string; folded: boolean } {
  const normalized = text.replace(/\r\n?/g, '\n');
  // A marker sharing its line with base64 (or with the other marker) is the sign of folding.
  const folded = /-----BEGIN CERTIFICATE-----[ \t]*[^\s]|[^\s][ \t]*-----END CERTIFICATE-----/.test(normalized);
  if (!folded) return { text, folded: false };
  const rebuilt = normalized
    .trim()
    .replace(/\s+/g, '\n')
    .replace(/BEGIN\nCERTIFICATE-----/g, 'BEGIN CERTIFICATE-----')
    .replace(/END\nCERTIFICATE-----/g, 'END CERTIFICATE-----');
  return { text: `${rebuilt}\n`, folded: true };
}
