// Imported first by bin/switchboard.js: a long-running command restarts itself here, before any
// other module of the CLI is read (src/cli/node-flags.js says why and how to turn it off).
import { relaunchWithNodeFlags } from './node-flags.js';

relaunchWithNodeFlags();
