// The body of the parser thread (see parser-thread.ts): reads and parses the files it is asked
// for, one at a time, so YAML work never runs on a thread that serves requests.
import { parentPort, workerData } from 'node:worker_threads';
import type { ConfigLimits } from './limits.ts';
import { readConfigFile } from './read.ts';
import type { ParserReply, ParserRequest } from './parser-thread.ts';

const limits = (workerData as { limits: ConfigLimits }).limits;

parentPort?.on('message', (request: ParserRequest) => {
  const post = (reply: ParserReply): void => parentPort?.postMessage(reply);
  // The hash goes first: if the parse then dies or times out, the main side still knows which
  // content failed and does not parse it again until it changes.
  const result = readConfigFile(request.file, request.previousHash, limits, (hash, bytes) => post({ id: request.id, type: 'hashed', hash, bytes }));
  post({ id: request.id, type: 'done', result });
});
