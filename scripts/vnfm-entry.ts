// The bundle's entry point, for bin/vnfm and the single executable alike.
import { main } from '../src/cli/main.js';

// A reader that stops early (`vnfm vnf-list | head -1`) closes the pipe: the
// rest of the output has nowhere to go, which is not vnfm's failure. End
// quietly with the command's own exit code, as Unix tools do on SIGPIPE,
// instead of dying on an unhandled EPIPE with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    stream.destroy();
  });
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
