/** The manual pages are the commands' own help, in roff: every command, its options, examples and notes. */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createContext } from '../../src/cli/context.js';
import { IO } from '../../src/cli/io.js';
import { renderManPages } from '../../src/cli/man.js';
import { buildProgram } from '../../src/cli/program.js';

async function pages() {
  const env = { HOME: '/nonexistent', NO_COLOR: '1' };
  const streams = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() };
  const program = await buildProgram(createContext(new IO(streams, env, { noColor: true }), env, '/'));
  const commands = program.commands.map((c) => c.name()).filter((n) => n !== 'help' && n !== '__complete');
  return { commands, pages: new Map(renderManPages(program, { version: '9.8.7', date: '2031-02-03' }).map((p) => [p.file, p.text])) };
}

/** The roff requests the pages use; any other line starting with "." or "'" would be text roff swallows. */
const REQUESTS = /^\.(\\"|TH|SH|SS|TP|PP|B|BR|RS|RE|nf|fi|br)( |$)/;

const { commands, pages: all } = await pages();

describe('manual pages', () => {
  it('are vnfm.1 and one page per command, dated and versioned', () => {
    expect(commands).toEqual(expect.arrayContaining(['vim-register', 'vnf-instantiate', 'demo', 'completion']));
    expect([...all.keys()].sort()).toEqual(['vnfm.1', ...commands.map((c) => `vnfm-${c}.1`)].sort());
    expect(all.get('vnfm.1')).toContain('.TH VNFM 1 "2031-02-03" "vnfm 9.8.7" "vnfm Manual"');
    expect(all.get('vnfm-vnf-scale.1')).toContain('.TH VNFM\\-VNF\\-SCALE 1 "2031-02-03" "vnfm 9.8.7"');
  });

  it("carry a command's usage, arguments, options with their choices and defaults, notes and examples", () => {
    const page = all.get('vnfm-vnf-scale.1')!;
    expect(page).toContain('.SH SYNOPSIS\n.B vnfm vnf\\-scale [options] <vnf>\n');
    expect(page).toContain('.SH ARGUMENTS\n.TP\n.B vnf\ninstance id or name\n');
    expect(page).toContain('.TP\n.B \\-\\-type <type>\nthe direction (choices: "SCALE_OUT", "SCALE_IN")\n');
    expect(page).toMatch(/\.TP\n\.B \\-\\-timeout <duration>\n[^\n]*\(default: "10m"\)\n/);
    // The text after the options: a note whose heading starts its sentence, then the examples as written.
    expect(page).toMatch(/\.SH PACKAGE SCRIPTS\n\.PP\nA hook the VNFD implements/);
    expect(page).toContain('.SH EXAMPLES\n.PP\n.nf\n# one more front\\-end replica\n$ vnfm vnf\\-scale web \\-\\-type SCALE_OUT \\-\\-aspect\\-id vdu1_aspect\n');
  });

  it('vnfm.1 describes every command, the environment and the exit statuses', () => {
    const page = all.get('vnfm.1')!;
    const sections = [...page.matchAll(/^\.SS vnfm (\S+)/gm)].map((m) => m[1]!.replace(/\\-/g, '-'));
    expect(sections).toEqual(commands);
    expect(page).toMatch(/\.SH ENVIRONMENT\n\.TP\n\.B VNFM_HOME\n/);
    expect(page).toMatch(/\.TP\n\.B 124\ntimed out\n/);
  });

  it('escape text so that roff prints it as written: no stray requests, backslashes doubled', () => {
    for (const [file, text] of all) {
      const stray = text.split('\n').filter((line) => /^[.']/.test(line) && !REQUESTS.test(line));
      expect(stray, file).toEqual([]);
    }
    // A Windows-style path in a help text would reach roff as an escape without this.
    expect([...all.values()].join('\n')).not.toMatch(/[^\\]\\[^-e"&fR(IB]/);
  });
});
