// A parser thread for parser-thread.test.ts: a file whose name says `hang` is never answered (the
// thread spins), one that says `slow` takes 400 ms; anything else is read as the real thread does.
import { parentPort, workerData } from 'node:worker_threads';
import type { ConfigLimits } from '../limits.ts';
import type { ParserReply, ParserRequest } from '../parser-thread.ts';
import { readConfigFile } from '../read.ts';

const limits = (workerData as { limits: ConfigLimits }).limits;

parentPort?.on('message', (request: ParserRequest) => {
  const post = (reply: ParserReply): void => parentPort?.postMessage(reply);
  if (request.file.includes('hang')) for (;;);
  if (request.file.includes('slow')) {
    const until = Date.now() + 400;
    while (Date.now() < until);
  }
  post({ id: request.id, type: 'done', result: readConfigFile(request.file, request.previousHash, limits) });
});
