// Imported first by bin/switchboard.js: a long-running command restarts itself here when
// SWITCHBOARD_SEMI_SPACE_MIB asks for it, before any other module of the CLI is read (src/cli/node-flags.js).
import { relaunchWithNodeFlags } from './node-flags.js';

relaunchWithNodeFlags();
