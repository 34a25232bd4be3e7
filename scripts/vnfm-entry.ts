// The bundle's entry point, for bin/vnfm and the single executable alike.
import { main } from '../src/cli/main.js';

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
