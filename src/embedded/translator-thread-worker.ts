// The body of the translator thread (see translator-thread.ts): translates the object sets it is
// sent, one at a time, so translation never runs on a thread that serves requests.
import { parentPort } from 'node:worker_threads';
import { translate } from '../controller/translate/index.ts';
import type { TranslatorReply, TranslatorRequest } from './translator-thread.ts';

const post = (reply: TranslatorReply): void => parentPort?.postMessage(reply);

parentPort?.on('message', (request: TranslatorRequest) => {
  let result;
  try {
    result = translate(request.objects, request.options);
  } catch (err) {
    post({ id: request.id, type: 'failed', message: `translation failed: ${(err as Error).message}` });
    return;
  }
  try {
    post({ id: request.id, type: 'done', result });
  } catch (err) {
    // A value structured clone cannot carry (a function): the result is not the plain data the IR must be.
    post({ id: request.id, type: 'failed', message: `the translation result could not be sent to the main thread: ${(err as Error).message}` });
  }
});
post({ type: 'ready' });
