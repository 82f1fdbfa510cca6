// A translator thread body for translator-thread.test.ts: hangs, runs out of heap, throws or
// answers with a tiny result, as the request's controllerName asks.
import { parentPort } from 'node:worker_threads';
import type { TranslatorReply, TranslatorRequest } from '../translator-thread.ts';

const post = (reply: TranslatorReply): void => parentPort?.postMessage(reply);

parentPort?.on('message', ({ id, objects, options }: TranslatorRequest) => {
  switch (options.controllerName) {
    case 'hang':
      for (;;) { /* a translation that never ends */ }
    case 'grow': {
      const held: string[][] = [];
      for (;;) held.push(new Array<string>(100_000).fill(`x${held.length}`));
    }
    case 'throw':
      post({ id, type: 'failed', message: 'translation failed: boom' });
      return;
    default:
      post({ id, type: 'done', result: { config: { version: `n${objects.length}`, binds: [], routes: {}, backends: {} }, statuses: [], secretPaths: [], secretValues: [] } });
  }
});
post({ type: 'ready' });
