/**
 * Progress of an LCM operation on stderr: on a terminal, a live view with
 * one line per resource, redrawn in place; otherwise plain timestamped lines
 * a log collector can keep.
 */
import type { LcmEvent } from '../../../lcm/index.js';
import type { IO } from '../../io.js';

export interface Progress {
  onEvent(event: LcmEvent): void;
  /** Leaves the last frame on screen. */
  stop(): void;
}

const resourceName = (r: { kind: string; name: string; namespace?: string }) => `${r.kind}/${r.name}${r.namespace ? ` (${r.namespace})` : ''}`;

function describe(event: LcmEvent): { key?: string; text: string; done?: boolean } {
  switch (event.type) {
    case 'occurrence':
      return { text: `${event.opOcc.operation} ${event.opOcc.operationState} (occurrence ${event.opOcc.id})` };
    case 'hook':
      return { text: `hook ${event.hook}` };
    case 'notice':
      return { text: event.message };
    case 'driver': {
      const r = event.event.resource;
      return r ? { key: resourceName(r), text: event.event.message, done: event.event.done } : { text: event.event.message };
    }
  }
}

export function createProgress(io: IO, now: () => Date): Progress {
  const stderr = io.streams.stderr as NodeJS.WritableStream & { isTTY?: boolean; rows?: number };
  if (!stderr.isTTY) {
    return {
      onEvent(event) {
        const d = describe(event);
        stderr.write(`${now().toISOString()} ${d.key ? `${d.key}: ` : ''}${d.text}\n`);
      },
      stop() {},
    };
  }
  const c = io.color;
  const lines = new Map<string, { text: string; done: boolean }>();
  let header = '';
  let drawn = 0;
  const draw = () => {
    const rows = Math.max(5, (stderr.rows ?? 24) - 2);
    const all = [...lines.entries()];
    const pending = all.filter(([, l]) => !l.done);
    const done = all.length - pending.length;
    // Past the screen height, finished resources fold into one count line.
    const shown = all.length + 1 <= rows ? all : pending.slice(-(rows - 2));
    const frame = [
      c.bold(header),
      ...(shown.length < all.length ? [c.dim(`  ✓ ${done} resources done`)] : []),
      ...shown.map(([k, l]) => `  ${l.done ? c.green('✓') : c.yellow('…')} ${k}  ${c.dim(l.text)}`),
    ];
    stderr.write((drawn ? `\x1b[${drawn}F\x1b[J` : '') + frame.join('\n') + '\n');
    drawn = frame.length;
  };
  return {
    onEvent(event) {
      const d = describe(event);
      if (d.key) lines.set(d.key, { text: d.text, done: Boolean(d.done) });
      else header = d.text;
      draw();
    },
    stop() {
      drawn = 0;
    },
  };
}
