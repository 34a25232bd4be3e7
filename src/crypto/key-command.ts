/**
 * `VNFM_MASTER_KEY_COMMAND`: a command that prints the master keys, so that
 * they can live in a secret manager (`pass`, `vault kv get`, a cloud's CLI)
 * rather than in the environment or a file. It is run as git runs its
 * credential helpers: through `/bin/sh -c`, its standard output being the
 * answer and its standard error the user's to see.
 *
 * What it prints is read as `VNFM_MASTER_KEY` is (keys separated by commas or
 * line breaks, primary first), kept in memory only and never echoed: not in
 * an error, not in a log, not in the environment of any process vnfm starts.
 */
import { spawnSync } from 'node:child_process';

import { SecretKeyError } from '../errors.js';

export const MASTER_KEY_COMMAND_ENV = 'VNFM_MASTER_KEY_COMMAND';

/** How long the command may take; a secret manager that asks for a passphrase waits for the operator. */
export const KEY_COMMAND_TIMEOUT_MS = 30_000;
/** The most the command may print: a few keys are 45 bytes each. */
const MAX_OUTPUT_BYTES = 64 * 1024;

/** The command, or `undefined` when `VNFM_MASTER_KEY_COMMAND` is unset or blank. */
export function keyCommandOf(env: Record<string, string | undefined>): string | undefined {
  const command = env[MASTER_KEY_COMMAND_ENV];
  return command === undefined || command.trim() === '' ? undefined : command;
}

/**
 * Runs the command and returns what it printed, trimmed. Its environment is
 * vnfm's own (a secret manager needs its token, HOME, GNUPGHOME...) without
 * the master key's variables; stdin is closed (vnfm's may be a request being
 * piped in), stderr goes to the terminal (a prompt, the manager's error).
 * Every failure is a SecretKeyError (exit 5) that shows none of the output.
 */
export function runKeyCommand(command: string, env: Record<string, string | undefined>, timeoutMs = KEY_COMMAND_TIMEOUT_MS): string {
  const childEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && name !== MASTER_KEY_COMMAND_ENV && name !== 'VNFM_MASTER_KEY') childEnv[name] = value;
  }
  const r = spawnSync('/bin/sh', ['-c', command], {
    env: childEnv,
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
    maxBuffer: MAX_OUTPUT_BYTES,
    encoding: 'utf8',
  });
  const hint = `run the command of ${MASTER_KEY_COMMAND_ENV} yourself to see what it does; it must print the master key (comma-separated keys, primary first) and exit 0`;
  const code = (r.error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ETIMEDOUT') {
    throw new SecretKeyError(`${MASTER_KEY_COMMAND_ENV} did not finish within ${timeoutMs / 1000} s and was stopped`, { hint });
  }
  if (code === 'ENOBUFS') {
    throw new SecretKeyError(`${MASTER_KEY_COMMAND_ENV} printed more than ${MAX_OUTPUT_BYTES / 1024} KiB, which is not a master key (its output is not shown)`, { hint });
  }
  if (r.error) throw new SecretKeyError(`${MASTER_KEY_COMMAND_ENV} could not be run: ${r.error.message}`, { hint });
  if (r.status !== 0) {
    const how = r.signal ? `was killed by ${r.signal}` : `exited with status ${r.status}`;
    throw new SecretKeyError(`${MASTER_KEY_COMMAND_ENV} ${how} (its output is not shown)`, { hint });
  }
  const out = r.stdout.trim();
  if (out === '') throw new SecretKeyError(`${MASTER_KEY_COMMAND_ENV} printed nothing`, { hint });
  return out;
}
