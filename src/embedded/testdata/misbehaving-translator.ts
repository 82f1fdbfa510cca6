// A translator thread body for translator-thread.test.ts: hangs, holds ~400 MiB, throws or
// answers with a tiny result, as the request's controllerName asks.
import { parentPort } from 'node:worker_threads';
import type { TranslatorReply, TranslatorRequest } from '../translator-thread.ts';

const post = (reply: TranslatorReply): void => parentPort?.postMessage(reply);

parentPort?.on('message', ({ id, objects, options }: TranslatorRequest) => {
  switch (options.controllerName) {
    case 'hang':
      for (;;) { /* a translation that never ends */ }
    case 'grow': {
      // About 400 MiB live, then an answer: over a small heap cap, fine without one.
      const held: number[][] = [];
      for (let i = 0; i < 500; i++) held.push(Array.from({ length: 100_000 }, (_, j) => i + j + 0.5));
      post({ id, type: 'done', result: { config: { version: `grew${held.length}`, binds: [], routes: {}, backends: {} }, statuses: [] } });
      return;
    }
    case 'throw':
      post({ id, type: 'failed', message: 'translation failed: boom' });
      return;
    default:
      post({ id, type: 'done', result: { config: { version: `n${(objects ?? []).length}`, binds: [], routes: {}, backends: {} }, statuses: [], secretPaths: [], secretValues: [] } });
  }
});
post({ type: 'ready' });
