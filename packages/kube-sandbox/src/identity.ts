/**
 * The sandbox's identity — its CA, server certificate and bearer token —
 * kept in a state directory, so that a restarted sandbox is the same cluster
 * to every client that trusted it before (as a restarted kind or minikube
 * cluster is). Its objects are not kept: they live in memory only.
 *
 * Layout (directory 0700, every file 0600, each written to a temporary file
 * and renamed into place):
 *   ca.crt, ca.key              the CA, made once
 *   apiserver.crt, apiserver.key  issued by the CA, again when it no longer fits
 *   token                       the bearer token, made once
 */
import { createPrivateKey, randomBytes, X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { SandboxError } from './errors.js';
import { generateSandboxCa, issueServerCert, SERVER_CERT_RENEW_BEFORE_DAYS, serverCertRenewalReason, type SandboxCa, type SandboxCerts, type ServerCert } from './certs.js';

/** File names inside a sandbox state directory. */
export const SANDBOX_STATE_FILES = {
  caCert: 'ca.crt',
  caKey: 'ca.key',
  serverCert: 'apiserver.crt',
  serverKey: 'apiserver.key',
  token: 'token',
} as const;

/** Everything that makes one sandbox recognisable to its clients. */
export interface SandboxIdentity extends SandboxCerts {
  /** The bearer token the server accepts. */
  token: string;
}

export interface LoadIdentityOptions {
  /** The state directory; created (0700) when missing. */
  stateDir: string;
  /** Hosts the server certificate must name (besides 127.0.0.1, ::1 and localhost). */
  hosts: string[];
  /** Default: now. */
  now?: Date;
  /** The uid that must own the directory and its files; default the current user's. */
  owner?: number;
}

/** An identity and what had to be written to disk to have it. */
export interface LoadedIdentity extends SandboxIdentity {
  /** Files written by this call (names from {@link SANDBOX_STATE_FILES}); empty when all was reused. */
  written: string[];
  /** Why the server certificate was issued again, when it was. */
  serverCertRenewed?: string;
}

/** A new random bearer token (256 bits, URL-safe base64). */
export function newSandboxToken(): string {
  return randomBytes(32).toString('base64url');
}

// Characters an HTTP bearer token may hold (RFC 6750 b64token).
const TOKEN_PATTERN = /^[A-Za-z0-9\-._~+/]+=*$/;

function resetHint(stateDir: string): string {
  return `remove ${stateDir} to give the sandbox a new identity; VIMs registered against it then need: vnfm vim-update NAME --config-file ${join(stateDir, 'vim-config.yaml')}`;
}

function modeText(mode: number): string {
  return (mode & 0o777).toString(8).padStart(4, '0');
}

function prepareStateDir(dir: string, owner: number | undefined): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new SandboxError(`cannot create the sandbox state directory ${dir}: ${(err as Error).message}`, {
      hint: 'set VNFM_HOME to a directory you can write to',
      cause: err,
    });
  }
  const st = fs.statSync(dir);
  if (!st.isDirectory()) {
    throw new SandboxError(`the sandbox state directory ${dir} is not a directory`, { hint: `move ${dir} away` });
  }
  if (owner !== undefined && st.uid !== owner) {
    throw new SandboxError(`the sandbox state directory ${dir} is owned by uid ${st.uid}, not by the current user (uid ${owner})`, {
      hint: `chown -R ${owner} ${dir}, or set VNFM_HOME to a directory you own`,
    });
  }
  // Others must not even list it; the files inside are checked one by one.
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
}

/**
 * Reads one state file, checking what is read (fstat on the open
 * descriptor): a regular file owned by `owner`, and, for a secret, closed to
 * group and others. `undefined` when missing.
 */
function readStateFile(dir: string, name: string, secret: boolean, owner: number | undefined): string | undefined {
  const file = join(dir, name);
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SandboxError(`cannot read the sandbox state file ${file}: ${(err as Error).message}`, { hint: resetHint(dir), cause: err });
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new SandboxError(`the sandbox state file ${file} is not a regular file`, { hint: resetHint(dir) });
    if (owner !== undefined && st.uid !== owner) {
      throw new SandboxError(`the sandbox state file ${file} is owned by uid ${st.uid}, not by the current user (uid ${owner})`, {
        hint: `chown ${owner} ${file} && chmod 600 ${file}`,
      });
    }
    if (secret && process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
      throw new SandboxError(`the sandbox state file ${file} is accessible to other users (mode ${modeText(st.mode)})`, {
        hint: `chmod 600 ${file}; if others may have read it, ${resetHint(dir)}`,
      });
    }
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch (err) {
    // Where a directory cannot be synced the rename is still atomic, only less durable.
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EBADF') throw err;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** Writes `name` in `dir` (0600) so that a reader sees the old content or the new, never a part. */
function writeStateFile(dir: string, name: string, text: string): void {
  const file = join(dir, name);
  const temp = join(dir, `.${name}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const fd = fs.openSync(temp, 'wx', 0o600);
    try {
      fs.writeFileSync(fd, text);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, file);
    fsyncDir(dir);
  } catch (err) {
    fs.rmSync(temp, { force: true });
    throw new SandboxError(`cannot write the sandbox state file ${file}: ${(err as Error).message}`, {
      hint: `check that ${dir} is writable and its file system not full`,
      cause: err,
    });
  }
}

function checkCa(dir: string, ca: SandboxCa, now: Date): void {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(ca.caPem);
    if (!cert.ca) throw new Error('it is not a CA certificate');
    if (!cert.checkPrivateKey(createPrivateKey(ca.caKeyPem))) throw new Error(`${SANDBOX_STATE_FILES.caKey} is not its key`);
  } catch (err) {
    throw new SandboxError(`the sandbox CA in ${join(dir, SANDBOX_STATE_FILES.caCert)} cannot be used: ${(err as Error).message}`, {
      hint: resetHint(dir),
      cause: err,
    });
  }
  const validTo = Date.parse(cert.validTo);
  if (validTo - now.getTime() < SERVER_CERT_RENEW_BEFORE_DAYS * 24 * 60 * 60 * 1000) {
    throw new SandboxError(`the sandbox CA in ${join(dir, SANDBOX_STATE_FILES.caCert)} expires on ${new Date(validTo).toISOString()}`, {
      hint: resetHint(dir),
    });
  }
}

/**
 * Returns the sandbox identity kept in `opts.stateDir`, making and writing
 * what is missing: on a first start everything; later, nothing, unless the
 * server certificate must be issued again (by the same CA) because it does
 * not name a host or expires soon. A CA with only one of its two files is
 * made again (it was never complete, or its key was removed). Refuses a
 * directory or file owned by another user, a key or token readable by
 * others, and a CA or token that cannot be used.
 */
export function loadSandboxIdentity(opts: LoadIdentityOptions): LoadedIdentity {
  const dir = opts.stateDir;
  const now = opts.now ?? new Date();
  const owner = opts.owner ?? process.getuid?.();
  const F = SANDBOX_STATE_FILES;
  const written: string[] = [];
  const write = (name: string, text: string): void => {
    writeStateFile(dir, name, text);
    written.push(name);
  };
  prepareStateDir(dir, owner);

  const caPem = readStateFile(dir, F.caCert, false, owner);
  const caKeyPem = readStateFile(dir, F.caKey, true, owner);
  let ca: SandboxCa;
  if (caPem !== undefined && caKeyPem !== undefined) {
    ca = { caPem, caKeyPem };
    checkCa(dir, ca, now);
  } else {
    ca = generateSandboxCa({ now });
    // The key first: a crash in between leaves a CA without certificate, made again next time.
    write(F.caKey, ca.caKeyPem);
    write(F.caCert, ca.caPem);
  }

  let token = readStateFile(dir, F.token, true, owner)?.trim();
  if (token === undefined) {
    token = newSandboxToken();
    write(F.token, `${token}\n`);
  } else if (!TOKEN_PATTERN.test(token)) {
    throw new SandboxError(`the sandbox token in ${join(dir, F.token)} is not a bearer token (letters, digits and -._~+/ only)`, {
      hint: resetHint(dir),
    });
  }

  const certPem = readStateFile(dir, F.serverCert, false, owner);
  const keyPem = readStateFile(dir, F.serverKey, true, owner);
  let server: ServerCert;
  let serverCertRenewed: string | undefined;
  const reason = certPem === undefined || keyPem === undefined ? 'there is none' : serverCertRenewalReason({ certPem, keyPem }, ca.caPem, opts.hosts, now);
  if (reason === undefined) {
    server = { certPem: certPem!, keyPem: keyPem! };
  } else {
    server = issueServerCert(ca, { hosts: opts.hosts, now });
    write(F.serverKey, server.keyPem);
    write(F.serverCert, server.certPem);
    if (certPem !== undefined && keyPem !== undefined) serverCertRenewed = reason;
  }

  return { ...ca, ...server, token, written, ...(serverCertRenewed ? { serverCertRenewed } : {}) };
}
