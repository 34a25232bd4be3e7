/** The lifecycle commands' own pieces: durations, request files, and progress in TTY and non-TTY mode. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { durationText, parseDuration, readRequestFile } from '../../src/cli/lcm/run.js';
import { createProgress, PLAIN_FLUSH_MS } from '../../src/cli/lcm/progress.js';
import { IO } from '../../src/cli/io.js';
import type { LcmEvent, LcmOpOcc } from '../../src/lcm/index.js';

function io(tty: boolean, env: Record<string, string> = {}) {
  let text = '';
  const stderr = Object.assign(new PassThrough(), { isTTY: tty, rows: 40 });
  stderr.on('data', (d: Buffer) => (text += d.toString()));
  const streams = { stdin: new PassThrough(), stdout: new PassThrough(), stderr };
  return { io: new IO(streams, env), text: () => text };
}

const op = { id: 'op-1', operation: 'INSTANTIATE', operationState: 'PROCESSING' } as LcmOpOcc;
const events: LcmEvent[] = [
  { type: 'occurrence', opOcc: op },
  { type: 'driver', event: { resource: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'vdu1', namespace: 'default' }, message: 'waiting for 0/1 replicas ready' } },
  { type: 'driver', event: { resource: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'vdu1', namespace: 'default' }, message: 'ready', done: true } },
];

describe('parseDuration', () => {
  it.each([
    ['300', 300],
    ['90s', 90],
    ['5m', 300],
    ['1h30m', 5400],
    ['1m30s', 90],
  ])('%s is %i s', (v, s) => expect(parseDuration(v)).toBe(s));
  it.each(['', '0', 'soon', '5d', '-1'])('refuses %j', (v) => expect(() => parseDuration(v)).toThrow(/--timeout/));
  // What "timed out after ..." says: never a bare number.
  it.each([
    ['40', '40s'],
    [' 300 ', '300s'],
    ['90s', '90s'],
    ['5m', '5m'],
    ['1h30m', '1h30m'],
  ])('%j is said %j', (v, said) => expect(durationText(v)).toBe(said));
});

describe('readRequestFile', () => {
  it('reads JSON and YAML, and names the file it cannot read or parse', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vnfm-req-'));
    writeFileSync(join(dir, 'a.json'), '{"flavourId": "simple"}');
    writeFileSync(join(dir, 'b.yaml'), 'flavourId: simple\n');
    writeFileSync(join(dir, 'c.json'), '{"flavourId": [');
    expect(await readRequestFile(join(dir, 'a.json'))).toEqual({ flavourId: 'simple' });
    expect(await readRequestFile(join(dir, 'b.yaml'))).toEqual({ flavourId: 'simple' });
    await expect(readRequestFile(join(dir, 'c.json'))).rejects.toThrow(/c\.json: is neither JSON nor YAML/);
    await expect(readRequestFile(join(dir, 'none.json'))).rejects.toThrow(/cannot read request file .*none\.json: it does not exist/);
  });
});

describe('progress', () => {
  const plainLines = [
    '2026-01-01T00:00:00.000Z INSTANTIATE PROCESSING (occurrence op-1)',
    '2026-01-01T00:00:00.000Z Deployment/vdu1 (default): waiting for 0/1 replicas ready',
    '2026-01-01T00:00:00.000Z Deployment/vdu1 (default): ready',
    '',
  ].join('\n');

  it('writes timestamped lines when stderr is not a terminal, a burst in one write', () => {
    const t = io(false);
    const writes: string[] = [];
    t.io.streams.stderr.on('data', (d: Buffer) => writes.push(d.toString()));
    const p = createProgress(t.io, () => new Date('2026-01-01T00:00:00.000Z'));
    events.forEach((e) => p.onEvent(e));
    expect(writes).toEqual([]);
    p.stop();
    expect(t.text()).toBe(plainLines);
    expect(writes).toEqual([plainLines]);
  });

  it('writes the plain lines of a burst PLAIN_FLUSH_MS after its first line, without waiting for the end', () => {
    vi.useFakeTimers();
    try {
      const t = io(false);
      const p = createProgress(t.io, () => new Date('2026-01-01T00:00:00.000Z'));
      events.forEach((e) => p.onEvent(e));
      vi.advanceTimersByTime(PLAIN_FLUSH_MS - 1);
      expect(t.text()).toBe('');
      vi.advanceTimersByTime(1);
      expect(t.text()).toBe(plainLines);
      p.stop();
      expect(t.text()).toBe(plainLines);
    } finally {
      vi.useRealTimers();
    }
  });

  it('writes each plain line at once given plainFlushMs 0', () => {
    const t = io(false);
    const p = createProgress(t.io, () => new Date('2026-01-01T00:00:00.000Z'), { plainFlushMs: 0 });
    events.forEach((e) => p.onEvent(e));
    expect(t.text()).toBe(plainLines);
  });

  it('redraws one line per resource on a terminal, without colour under NO_COLOR', () => {
    const t = io(true, { NO_COLOR: '1' });
    // A clock that stands still: every elapsed time shown is 0.0s.
    const p = createProgress(t.io, () => new Date('2026-01-01T00:00:00.000Z'));
    events.forEach((e) => p.onEvent(e));
    p.stop();
    const frames = t.text().split('\x1b[');
    expect(frames.at(-1)).toBe('J' + 'INSTANTIATE PROCESSING (occurrence op-1)  0.0s\n  ✓ Deployment/vdu1 (default)  ready  0.0s\n');
    expect(t.text()).toContain('\x1b[2F');
    expect(t.text()).not.toMatch(/\x1b\[\d+m/);
  });

  const vdu1 = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'vdu1', namespace: 'default' };
  const ended = (operationState: LcmOpOcc['operationState']): LcmEvent => ({ type: 'occurrence', opOcc: { ...op, operationState } });
  const lastFrame = (text: string) =>
    text
      .split('\x1b[')
      .at(-1)!
      .replace(/^\d*[FJ]/, '');

  it('on a terminal, a finished hook reads ✓ and its time, and the final frame is written once', () => {
    const t = io(true, { NO_COLOR: '1' });
    const p = createProgress(t.io, () => new Date('2026-01-01T00:00:00.000Z'));
    p.onEvent(events[0]!);
    p.onEvent({ type: 'hook', hook: 'instantiate_start' });
    p.onEvent(events[2]!);
    p.onEvent({ type: 'hook', hook: 'instantiate_end' });
    p.onEvent(ended('COMPLETED'));
    p.stop();
    expect(lastFrame(t.text())).toBe(
      [
        'INSTANTIATE COMPLETED (occurrence op-1)  0.0s',
        '  ✓ hook instantiate_start  0.0s',
        '  ✓ Deployment/vdu1 (default)  ready  0.0s',
        '  ✓ hook instantiate_end  0.0s',
        '',
      ].join('\n'),
    );
    expect(t.text().split('INSTANTIATE COMPLETED').length - 1).toBe(1);
  });

  it('on a terminal, the step an operation failed at reads ✗, a hook that ran too', () => {
    const t = io(true, { NO_COLOR: '1' });
    const p = createProgress(t.io, () => new Date('2026-01-01T00:00:00.000Z'));
    p.onEvent(events[0]!);
    p.onEvent({ type: 'driver', event: { resource: vdu1, message: 'waiting for 0/1 replicas ready' } });
    p.onEvent(ended('FAILED_TEMP'));
    p.stop();
    expect(lastFrame(t.text())).toBe('INSTANTIATE FAILED_TEMP (occurrence op-1)  0.0s\n  ✗ Deployment/vdu1 (default)  waiting for 0/1 replicas ready  0.0s\n');

    const h = io(true, { NO_COLOR: '1' });
    const q = createProgress(h.io, () => new Date('2026-01-01T00:00:00.000Z'));
    q.onEvent(events[0]!);
    q.onEvent(events[2]!);
    q.onEvent({ type: 'hook', hook: 'instantiate_end' });
    q.onEvent(ended('FAILED_TEMP'));
    q.stop();
    expect(lastFrame(h.text())).toContain('  ✗ hook instantiate_end  0.0s\n');
    expect(lastFrame(h.text())).toContain('  ✓ Deployment/vdu1 (default)  ready  0.0s\n');
    expect(h.text()).not.toMatch(/✓ hook instantiate_end/);
  });
});
