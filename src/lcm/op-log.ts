/**
 * The log of one LCM operation occurrence: `VNFM_HOME/logs/<occurrence>.log`
 * (directory 0700, file 0600), appended by every attempt (retry adds to it).
 * Management drivers write the commands they run on nodes and their output
 * here, secrets already redacted; `vnfm op-log OP` prints it.
 */
import { appendFileSync, mkdirSync, openSync, closeSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { echo, VnfmError } from '../errors.js';
import { isUuid } from '../model/ids.js';

export interface OpLog {
  readonly path: string;
  write(line: string): void;
}

/** The log's path, made only of an id of vnfm's own form (the store may hold a row something else wrote). */
export function opLogPath(home: string, opId: string): string {
  if (!isUuid(opId)) {
    throw new VnfmError(`occurrence id ${echo(opId)} is not a UUID: refusing to make a path of it`, {
      hint: 'vnfm never makes such an id: the record was written by something else',
    });
  }
  return join(home, 'logs', `${opId}.log`);
}

export function openOpLog(home: string, opId: string, now: () => Date): OpLog {
  const path = opLogPath(home, opId);
  let ready = false;
  const prepare = () => {
    mkdirSync(join(home, 'logs'), { recursive: true, mode: 0o700 });
    // Created 0600 before anything is written to it.
    if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
    ready = true;
  };
  return {
    path,
    write(line) {
      if (!ready) prepare();
      const stamp = now().toISOString();
      const text = line.endsWith('\n') ? line.slice(0, -1) : line;
      appendFileSync(
        path,
        text
          .split('\n')
          .map((l) => `${stamp} ${l}`)
          .join('\n') + '\n',
      );
    },
  };
}

/** The occurrence's log file, or undefined when nothing was logged for it yet. */
export function findOpLog(home: string, opId: string): string | undefined {
  const path = opLogPath(home, opId);
  return existsSync(path) ? path : undefined;
}
