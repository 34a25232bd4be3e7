// The bundle's entry point, for bin/vnfm and the single executable alike.
import { main } from '../src/cli/main.js';
import { quietOnClosedPipe } from '../src/cli/stdio.js';

// A closed stdout (`vnfm vnf-list | head -1`) ends the command quietly with its own exit code (see stdio.ts).
quietOnClosedPipe();

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
  // The command is done. With nothing left to wait for (no handle, timer or request: a stream still writing,
  // a socket or a child keep the usual ending), the process ends now: letting the event loop run dry first
  // makes Node drain V8's pending tasks (a scavenge of the start-up's garbage, background compiles), 6-8 ms
  // of a short command's 80. vnfm awaits all its work, so nothing of it is cut; the exit handlers run either
  // way (the code cache is written in one).
  if (process.getActiveResourcesInfo().length === 0) process.exit();
});
