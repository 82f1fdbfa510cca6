// The body of the translator thread (see translator-thread.ts): translates the object sets it is
// sent, one at a time, so translation never runs on a thread that serves requests.
import { parentPort } from 'node:worker_threads';
import { IdleGc } from '../common/idle-gc.ts';
import { IncrementalTranslator } from '../controller/translate/incremental.ts';
import { BindSender } from './bind-sender.ts';
import type { TranslationUpdate, TranslatorReply, TranslatorRequest } from './translator-thread.ts';

const post = (reply: TranslatorReply): void => parentPort?.postMessage(reply);

/**
 * A translation leaves this thread with tens of MiB V8 keeps (garbage below the next GC's limit,
 * a grown young generation): given back in a memory-reducing GC once the thread has been quiet
 * this long, as the embedded config thread does (src/embedded/config-thread-worker.ts). Off unless
 * SWITCHBOARD_IDLE_GC=1: the next edit after it is served later (src/common/idle-gc.ts).
 */
const IDLE_GC_DELAY_MS = 2000;
const idleGc = new IdleGc(IDLE_GC_DELAY_MS);

/** Holds the objects between requests (see TranslatorRequest). */
let translator: IncrementalTranslator | undefined;
/** Unchanged binds cross as null (their listeners' route lists are most of a bind at 10k routes). */
const bindSender = new BindSender();

parentPort?.on('message', (request: TranslatorRequest) => {
  idleGc.busy();
  try {
    handle(request);
  } finally {
    idleGc.idle();
  }
});

function handle(request: TranslatorRequest): void {
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
}
post({ type: 'ready' });
