/**
 * A logged-in SSH connection to one node: commands (with sudo, environment,
 * stdin and a timeout), SFTP uploads and small files. Everything it does goes
 * to the operation's log, redacted: `<label> $ <command>`, the output lines,
 * `<label> exit <code>`.
 */
import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { posix } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { NodeSSH } from 'node-ssh';
import { VnfmError } from '../../errors.js';
import { SshCommandError } from './errors.js';
import { shellQuote } from './quote.js';

import { createSessionRedactor, envSecrets, sessionSecrets } from './redact.js';
import type { ExecOptions, ExecResult, SshConnectOptions, SshSession, SshTarget } from './types.js';

const DEFAULT_EXEC_TIMEOUT_MS = 600_000;
/** How many lines of a failed command's output its error carries. */
const TAIL_LINES = 20;
/** The exit code of the read-through-sudo script when the file is absent. */
const ABSENT = 44;
/** How long after a command's timeout vnfm stops waiting when the node did not end it. */
const TIMEOUT_GRACE_MS = 10_000;
/** The exit status of a command the node's `timeout -s KILL` killed. */
const KILLED = 137;
/** SFTP status "no such file". */
const SFTP_NO_SUCH_FILE = 2;

/** The parts of ssh2's channel and SFTP objects used here (ssh2 ships no types). */
interface Channel {
  close(): void;
}
interface Sftp {
  fastPut(local: string, remote: string, opts: { mode?: number; step?: (done: number, chunk: number, total: number) => void }, cb: (err?: Error | null) => void): void;
  writeFile(path: string, data: Buffer, opts: { mode?: number }, cb: (err?: SftpError | null) => void): void;
  readFile(path: string, cb: (err: SftpError | null | undefined, data: Buffer) => void): void;
  chmod(path: string, mode: number, cb: (err?: Error | null) => void): void;
  end(): void;
}
type SftpError = Error & { code?: number | string };

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface RunResult extends ExecResult {
  /** The last output lines, redacted (empty when quiet). */
  tail: string;
  /** Why the command did not end by itself, when it did not. */
  stopped?: 'timeout' | 'aborted' | 'lost';
}

export class NodeSshSession implements SshSession {
  private readonly redact: (text: string) => string;
  private readonly secrets: string[];
  private sudoNeedsPassword?: Promise<boolean>;
  private closed = false;

  constructor(
    readonly target: SshTarget,
    private readonly ssh: NodeSSH,
    private readonly opts: SshConnectOptions,
  ) {
    this.secrets = sessionSecrets(target, opts.secrets);
    this.redact = createSessionRedactor(this.secrets);
  }

  private get label(): string {
    return this.target.label;
  }

  async exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    const r = await this.run(command, opts);
    if (r.stopped || (r.code !== 0 && !opts.allowFailure)) throw this.failure(command, opts, r);
    return { code: r.code, stdout: r.stdout, stderr: r.stderr };
  }

  async upload(localPath: string, remotePath: string, opts: { mode?: number } = {}): Promise<void> {
    const size = (await stat(localPath)).size;
    await this.exec(`mkdir -p -- ${shellQuote(posix.dirname(remotePath))}`);
    this.opts.log(`${this.label} upload ${localPath} -> ${remotePath} (${size} bytes)`);
    let reported = 0;
    const step = (done: number, _chunk: number, total: number) => {
      const tenth = Math.floor((done / total) * 10);
      if (total >= 64 * 2 ** 20 && tenth > reported && tenth < 10) {
        reported = tenth;
        this.opts.report?.(`${this.label}: uploading ${posix.basename(remotePath)}: ${tenth * 10}% of ${formatBytes(total)}`);
      }
    };
    await this.withSftp(`upload ${localPath} to ${remotePath}`, (sftp, done) =>
      sftp.fastPut(localPath, remotePath, { ...(opts.mode === undefined ? {} : { mode: opts.mode }), step }, done),
    );
    if (opts.mode !== undefined) await this.withSftp(`chmod ${remotePath}`, (sftp, done) => sftp.chmod(remotePath, opts.mode as number, done));
  }

  async writeFile(remotePath: string, content: string | Buffer, opts: { sudo?: boolean; mode?: number } = {}): Promise<void> {
    const data = typeof content === 'string' ? Buffer.from(content) : content;
    this.opts.log(`${this.label} write ${remotePath} (${data.length} bytes${opts.sudo ? ', through sudo' : ''})`);
    if (opts.sudo) {
      const tmp = `/tmp/.vnfm-${randomUUID()}`;
      await this.putBuffer(tmp, data, 0o600);
      try {
        const mode = (opts.mode ?? 0o644).toString(8).padStart(4, '0');
        await this.exec(`install -D -m ${mode} ${shellQuote(tmp)} ${shellQuote(remotePath)}`, { sudo: true });
      } finally {
        await this.exec(`rm -f -- ${shellQuote(tmp)}`, { allowFailure: true }).catch(() => undefined);
      }
      return;
    }
    try {
      await this.putBuffer(remotePath, data, opts.mode);
    } catch (err) {
      if ((err as { sftpCode?: number }).sftpCode !== SFTP_NO_SUCH_FILE) throw err;
      await this.exec(`mkdir -p -- ${shellQuote(posix.dirname(remotePath))}`);
      await this.putBuffer(remotePath, data, opts.mode);
    }
    if (opts.mode !== undefined) await this.withSftp(`chmod ${remotePath}`, (sftp, done) => sftp.chmod(remotePath, opts.mode as number, done));
  }

  async readFile(remotePath: string, opts: { sudo?: boolean } = {}): Promise<string | undefined> {
    if (opts.sudo) {
      const p = shellQuote(remotePath);
      const command = `test -e ${p} || exit ${ABSENT}; exec cat -- ${p}`;
      const execOpts: ExecOptions = { sudo: true, quiet: true, allowFailure: true };
      const r = await this.run(command, execOpts);
      if (!r.stopped && r.code === ABSENT) return undefined;
      if (r.stopped || r.code !== 0) throw this.failure(command, execOpts, r);
      return r.stdout;
    }
    this.opts.log(`${this.label} read ${remotePath}`);
    try {
      const data = await this.withSftp<Buffer>(`read ${remotePath}`, (sftp, done) => sftp.readFile(remotePath, (err, buf) => done(err, buf)));
      return data.toString('utf8');
    } catch (err) {
      if ((err as { sftpCode?: number }).sftpCode === SFTP_NO_SUCH_FILE) return undefined;
      throw err;
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.ssh.dispose();
  }

  private async putBuffer(remotePath: string, data: Buffer, mode: number | undefined): Promise<void> {
    await this.withSftp(`write ${remotePath}`, (sftp, done) => sftp.writeFile(remotePath, data, mode === undefined ? {} : { mode }, done));
  }

  /** Runs one SFTP request on its own SFTP channel; an abort ends the channel. */
  private async withSftp<T = void>(what: string, fn: (sftp: Sftp, done: (err?: SftpError | null, value?: T) => void) => void): Promise<T> {
    const { signal } = this.opts;
    if (signal.aborted) throw this.interrupted(what);
    const sftp = (await this.ssh.requestSFTP()) as unknown as Sftp;
    const onAbort = () => sftp.end();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await new Promise<T>((resolve, reject) => {
        fn(sftp, (err, value) => (err ? reject(err) : resolve(value as T)));
      });
    } catch (err) {
      if (signal.aborted) throw this.interrupted(what);
      const code = (err as SftpError).code;
      throw Object.assign(new VnfmError(`${this.label}: SFTP ${this.redact(what)} failed: ${this.redact(err instanceof Error ? err.message : String(err))}`, { cause: err }), {
        sftpCode: typeof code === 'number' ? code : undefined,
      });
    } finally {
      signal.removeEventListener('abort', onAbort);
      sftp.end();
    }
  }

  private interrupted(what: string): VnfmError {
    return new VnfmError(`${this.label}: interrupted during ${this.redact(what)}`, { cause: this.opts.signal.reason });
  }

  /** Whether sudo asks this user for a password (asked once per session). */
  private needsSudoPassword(): Promise<boolean> {
    if (!this.target.password) return Promise.resolve(false);
    this.sudoNeedsPassword ??= this.run('sudo -n true', { allowFailure: true, quiet: true, timeoutMs: 30_000 }).then((r) => !r.stopped && r.code !== 0);
    return this.sudoNeedsPassword;
  }

  /** The session's redactor, plus the values of secret-looking environment variables. */
  private redactorFor(env: Record<string, string>): (text: string) => string {
    const more = envSecrets(env);
    return more.length ? createSessionRedactor([...this.secrets, ...more]) : this.redact;
  }

  private async run(command: string, opts: ExecOptions): Promise<RunResult> {
    const { signal } = this.opts;
    const env = opts.env ?? {};
    for (const name of Object.keys(env)) {
      if (!ENV_NAME.test(name)) throw new VnfmError(`${this.label}: environment variable name ${JSON.stringify(name)} is not a shell name`);
    }
    const redact = this.redactorFor(env);
    const exports = Object.entries(env)
      .map(([k, v]) => `export ${k}=${shellQuote(v)}; `)
      .join('');
    const timeoutMs = opts.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS;
    // The node enforces the timeout itself (coreutils timeout kills the
    // command's whole process group, as root under sudo); vnfm stops waiting a
    // little later in case the node does not.
    const script = shellQuote(exports + command);
    let remote = `timeout -s KILL ${timeoutMs / 1000}s sh -c ${script}`;
    let stdin = opts.stdin;
    if (opts.sudo) {
      const withPassword = await this.needsSudoPassword();
      // -k: always ask, so the password line is never left for the command to read.
      remote = withPassword ? `sudo -k -S -p '' -- ${remote}` : `sudo -n -- ${remote}`;
      if (withPassword) stdin = `${this.target.password}\n${opts.stdin ?? ''}`;
    }
    const shown = `${opts.sudo ? 'sudo ' : ''}${Object.entries(env)
      .map(([k, v]) => `${k}=${v} `)
      .join('')}${command}`;
    this.opts.log(`${this.label} $ ${redact(shown)}`);

    if (signal.aborted) return { code: -1, stdout: '', stderr: '', tail: '', stopped: 'aborted' };
    const tail: string[] = [];
    const line = (text: string) => {
      const l = redact(text);
      if (opts.quiet) return;
      this.opts.log(`${this.label} | ${l}`);
      tail.push(l);
      if (tail.length > TAIL_LINES) tail.shift();
    };
    const out = lineSplitter(line);
    const err = lineSplitter(line);
    let channel: Channel | undefined;
    let stopped: RunResult['stopped'];
    let giveUp: () => void = () => undefined;
    const gaveUp = new Promise<undefined>((resolve) => (giveUp = () => resolve(undefined)));
    const stop = (why: 'timeout' | 'aborted') => {
      stopped ??= why;
      if (channel) killChannel(channel);
      giveUp();
    };
    const started = Date.now();
    const timer = setTimeout(() => stop('timeout'), timeoutMs + TIMEOUT_GRACE_MS);
    const onAbort = () => stop('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
    let r: { stdout: string; stderr: string; code: number | null; signal: string | null } | undefined;
    try {
      const running = this.ssh.execCommand(remote, {
        ...(stdin === undefined ? {} : { stdin }),
        noTrim: true,
        onChannel: (ch) => {
          channel = ch as unknown as Channel;
          if (stopped === 'timeout' || stopped === 'aborted') killChannel(channel);
        },
        onStdout: (chunk) => out.push(chunk),
        onStderr: (chunk) => err.push(chunk),
      });
      running.catch(() => undefined);
      r = await Promise.race([running, gaveUp]);
    } catch (e) {
      if (signal.aborted) return { code: -1, stdout: '', stderr: '', tail: tail.join('\n'), stopped: 'aborted' };
      throw new VnfmError(`${this.label}: could not run \`${redact(command)}\`: ${redact(e instanceof Error ? e.message : String(e))}`, { cause: e });
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
    out.end();
    err.end();
    if (r && (r.code === KILLED || /KILL$/.test(r.signal ?? '')) && Date.now() - started >= timeoutMs) stopped ??= 'timeout';
    if (r && r.code === null) stopped ??= 'lost';
    const code = r?.code ?? -1;
    this.opts.log(
      stopped === 'timeout'
        ? `${this.label} killed: timed out after ${formatMs(timeoutMs)}`
        : stopped === 'aborted'
          ? `${this.label} killed: the operation was interrupted`
          : stopped === 'lost'
            ? `${this.label} ended without an exit code${r?.signal ? ` (signal ${r.signal})` : ''}`
            : `${this.label} exit ${code}`,
    );
    return { code, stdout: r?.stdout ?? '', stderr: r?.stderr ?? '', tail: tail.join('\n'), ...(stopped ? { stopped } : {}) };
  }

  private failure(command: string, opts: ExecOptions, r: RunResult): VnfmError {
    const redact = this.redactorFor(opts.env ?? {});
    const shown = redact(`${opts.sudo ? 'sudo ' : ''}${command}`);
    const timeoutMs = opts.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS;
    const tail = opts.quiet ? '' : r.tail;
    switch (r.stopped) {
      case 'aborted':
        return new SshCommandError(this.label, shown, null, tail, false, 'was killed: the operation was interrupted', { cause: this.opts.signal.reason });
      case 'timeout':
        return new SshCommandError(this.label, shown, null, tail, true, `timed out after ${formatMs(timeoutMs)} and was killed`, {
          hint: 'the node may be slow or stuck; look at it, then retry the operation (vnfm op-retry)',
        });
      case 'lost':
        return new SshCommandError(this.label, shown, null, tail, false, 'ended without an exit code (the connection was lost or the command was killed)');
      default:
        return new SshCommandError(this.label, shown, r.code, tail, false, `exited with code ${r.code}`);
    }
  }
}

/**
 * Asks sshd to KILL the command's process group, then closes the channel.
 * ssh2 sends the signal request only while our side of the channel is open
 * for writing, and a command's stdin is already closed, so the request goes
 * through its protocol object directly.
 */
function killChannel(channel: Channel): void {
  const ch = channel as Channel & { outgoing?: { id: number; state: string }; _client?: { _protocol?: { signal(id: number, name: string): void } } };
  try {
    if (ch.outgoing?.state === 'open') ch._client?._protocol?.signal(ch.outgoing.id, 'KILL');
  } catch {
    // the channel is closing already
  }
  channel.close();
}

/** Splits a byte stream into lines, decoding UTF-8 across chunk boundaries. */
function lineSplitter(line: (text: string) => void): { push(chunk: Buffer): void; end(): void } {
  const decoder = new StringDecoder('utf8');
  let partial = '';
  const flush = (text: string) => {
    const parts = (partial + text).split(/\r?\n/);
    partial = parts.pop() ?? '';
    parts.forEach(line);
  };
  return {
    push: (chunk) => flush(decoder.write(chunk)),
    end: () => {
      flush(decoder.end());
      if (partial) line(partial);
      partial = '';
    },
  };
}

export function formatMs(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

function formatBytes(n: number): string {
  return n >= 2 ** 30 ? `${(n / 2 ** 30).toFixed(1)} GiB` : `${(n / 2 ** 20).toFixed(0)} MiB`;
}
