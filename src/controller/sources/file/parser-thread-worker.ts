// The body of the parser thread (see parser-thread.ts): reads and parses the files it is asked
// for, one at a time, so YAML work never runs on a thread that serves requests.
import { parentPort, workerData } from 'node:worker_threads';
import { IdleGc } from '../../../common/idle-gc.ts';
import type { ConfigLimits } from './limits.ts';
import { readConfigFile } from './read.ts';
import type { ParserReply, ParserRequest } from './parser-thread.ts';

const limits = (workerData as { limits: ConfigLimits }).limits;

/**
 * A scan's parses leave this thread's young generation grown and its old pages full of the
 * parsed trees (already cloned to the config thread): given back once the thread is quiet
 * (~10–20 MiB of RSS at 10k routes; the GC takes ~10–30 ms of this thread, and a read that
 * arrives meanwhile waits for it). Off unless SWITCHBOARD_IDLE_GC=1 (src/common/idle-gc.ts).
 */
const IDLE_GC_DELAY_MS = 2000;
const idleGc = new IdleGc(IDLE_GC_DELAY_MS);

parentPort?.on('message', (request: ParserRequest) => {
  idleGc.busy();
  const post = (reply: ParserReply): void => parentPort?.postMessage(reply);
  // The hash goes first: if the parse then dies or times out, the main side still knows which
  // content failed and does not parse it again until it changes.
  const result = readConfigFile(request.file, request.previousHash, limits, (hash, bytes) => post({ id: request.id, type: 'hashed', hash, bytes }));
  post({ id: request.id, type: 'done', result });
  // Requests are handled one per message, synchronously: the timer restarts after each and fires
  // only when no read came for the whole delay.
  idleGc.idle();
});
