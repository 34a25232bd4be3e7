// The bundle's entry point, for bin/vnfm and the single executable alike.
import { main } from '../src/cli/main.js';
import { quietOnClosedPipe } from '../src/cli/stdio.js';

// A closed stdout (`vnfm vnf-list | head -1`) ends the command quietly with its own exit code (see stdio.ts).
quietOnClosedPipe();

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
