/**
 * An interactive bash, zsh or fish on a pseudo-terminal (util-linux
 * `script` makes it), with a completion script loaded as a user loads it.
 * Keys written to it go through the shell's own line editor: a TAB runs its
 * real completion machinery (readline, zle with compinit, fish's reader)
 * and inserts what that machinery inserts, and a newline runs the line.
 * After each line a marker command runs, whose output says the shell is
 * done with the line: nothing waits on the clock.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type Shell = 'bash' | 'zsh' | 'fish';

export interface PtyShellOptions {
  /** The completion script to load. */
  script: string;
  /** Where the shell's startup files go. */
  dir: string;
  cwd: string;
  env: Record<string, string>;
  /** Longest wait for the shell to finish a line (it only bounds a hang). */
  timeoutMs?: number;
}

/** The command line `script` runs, the startup files it reads written into `dir`. */
function shellCommand(shell: Shell, o: PtyShellOptions): { command: string; env: Record<string, string> } {
  const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  switch (shell) {
    case 'bash':
      writeFileSync(join(o.dir, 'bashrc'), `PS1='$ '\nsource ${q(o.script)}\n`);
      return { command: `bash --noprofile --rcfile ${q(join(o.dir, 'bashrc'))} -i`, env: {} };
    case 'zsh': {
      const zdot = join(o.dir, 'zdotdir');
      mkdirSync(zdot, { recursive: true });
      // compinit's own checks of the directories on $fpath would stop to ask: -u.
      writeFileSync(join(zdot, '.zshrc'), `PS1='$ '\nautoload -U compinit; compinit -u -D\nsource ${q(o.script)}\n`);
      return { command: 'zsh -i', env: { ZDOTDIR: zdot } };
    }
    case 'fish':
      return { command: `fish --no-config -i -C ${q(`source ${q(o.script)}`)}`, env: {} };
  }
}

export class PtyShell {
  private output = '';
  private lines = 0;
  private exited: Promise<void>;

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly timeoutMs: number,
  ) {
    child.stdout.on('data', (d: Buffer) => (this.output += d.toString()));
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  static async start(shell: Shell, o: PtyShellOptions): Promise<PtyShell> {
    const { command, env } = shellCommand(shell, o);
    // -q: no banner; -f: flush at once; -e: its exit status; the typescript goes nowhere.
    const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: o.cwd, env: { ...o.env, ...env }, detached: true });
    const sh = new PtyShell(child, o.timeoutMs ?? 30_000);
    await sh.line('');
    return sh;
  }

  /**
   * Types `keys` (a TAB completes, the closing newline runs the line), then
   * waits until the shell has run it. Returns what the terminal showed.
   */
  async line(keys: string): Promise<string> {
    const n = ++this.lines;
    const from = this.output.length;
    // Each shell runs `printf` alike; its output "MARK-n" is not what was typed ("MARK n").
    this.child.stdin.write(`${keys}\nprintf '%s-%s\\n' MARK ${n}\n`);
    await this.until(new RegExp(`MARK-${n}\\r?\\n`), from);
    return this.output.slice(from);
  }

  private until(re: RegExp, from: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        clearInterval(poll);
        reject(new Error(`the shell did not finish the line; the terminal shows: ${JSON.stringify(this.output.slice(from))}`));
      }, this.timeoutMs);
      const poll = setInterval(() => {
        if (!re.test(this.output.slice(from))) return;
        clearInterval(poll);
        clearTimeout(timer);
        resolve();
      }, 10);
    });
  }

  /** Ends the shell (`exit`), or its process group if it does not go. */
  async close(): Promise<void> {
    this.child.stdin.write('exit\n');
    const gone = await Promise.race([this.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5_000))]);
    if (!gone && this.child.pid) process.kill(-this.child.pid, 'SIGKILL');
    await this.exited;
  }
}
