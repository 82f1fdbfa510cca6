// A config thread body for config-thread.test.ts: on a scan it says it is translating, then hangs,
// holds ~400 MiB or fails, as workerData's controllerName asks.
import { parentPort, workerData } from 'node:worker_threads';
import type { ConfigThreadInit, ConfigThreadReply, ConfigThreadRequest } from '../config-thread.ts';

const init = workerData as ConfigThreadInit;
const post = (reply: ConfigThreadReply): void => parentPort?.postMessage(reply);

parentPort?.on('message', ({ id }: ConfigThreadRequest) => {
  post({ id, type: 'translating' });
  switch (init.options.controllerName) {
    case 'hang':
      for (;;) { /* a translation that never ends */ }
    case 'grow': {
      const held: number[][] = [];
      for (let i = 0; i < 500; i++) held.push(Array.from({ length: 100_000 }, (_, j) => i + j + 0.5));
      post({ id, type: 'failed', message: `grew ${held.length}` });
      return;
    }
    default:
      post({ id, type: 'failed', message: 'translation failed: boom' });
  }
});
post({ type: 'ready' });
