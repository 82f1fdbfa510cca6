// The body of the translator thread (see translator-thread.ts): translates the object sets it is
// sent, one at a time, so translation never runs on a thread that serves requests.
import { parentPort } from 'node:worker_threads';
import { IncrementalTranslator } from '../controller/translate/incremental.ts';
import { BindSender } from './bind-sender.ts';
import type { TranslationUpdate, TranslatorReply, TranslatorRequest } from './translator-thread.ts';

const post = (reply: TranslatorReply): void => parentPort?.postMessage(reply);

/** Holds the objects between requests (see TranslatorRequest). */
let translator: IncrementalTranslator | undefined;
/** Unchanged binds cross as null (their listeners' route lists are most of a bind at 10k routes). */
const bindSender = new BindSender();

parentPort?.on('message', (request: TranslatorRequest) => {
  let result: TranslationUpdate;
  try {
    // patchRecords: only the changes leave this thread, no result's routes record is kept.
    if (request.objects) translator = new IncrementalTranslator(request.options, { patchRecords: true });
    if (!translator) throw new Error('a change arrived before the objects it changes');
    const next = request.objects ? translator.replace(request.objects) : translator.apply(request.delta ?? { upserted: [], removed: [] });
    result = {
      version: next.config.version, binds: bindSender.send(next.config.binds, next.changes.full), changes: next.changes, secretPaths: next.secretPaths, secretValues: next.secretValues,
      ...(next.changes.statuses === undefined ? { statuses: next.statuses } : {}),
    };
  } catch (err) {
    // The held objects may be half-changed: the next request must bring them all.
    translator = undefined;
    bindSender.reset();
    post({ id: request.id, type: 'failed', message: `translation failed: ${(err as Error).message}` });
    return;
  }
  try {
    post({ id: request.id, type: 'updated', result });
  } catch (err) {
    // A value structured clone cannot carry (a function): the result is not the plain data the IR must be.
    translator = undefined;
    bindSender.reset();
    post({ id: request.id, type: 'failed', message: `the translation result could not be sent to the main thread: ${(err as Error).message}` });
  }
});
post({ type: 'ready' });
