// The body of the config thread (see config-thread.ts): the one place the embedded gateway holds
// the configuration's objects. It scans the files it is told changed (parsing each in the nested
// parser thread, under the same limits as ever), dedupes, translates incrementally, and sends the
// serving thread only the IR changes and statuses.
import { parentPort, workerData } from 'node:worker_threads';
import { pino } from 'pino';
import type { KubeObject, ObjectStatus } from '../api/gateway/object.ts';
import { IdleGc } from '../common/idle-gc.ts';
import { FileSet } from '../controller/sources/file/file-set.ts';
import type { ConfigLimits } from '../controller/sources/file/limits.ts';
import { ParserThread } from '../controller/sources/file/parser-thread.ts';
import { ScanReporter } from '../controller/sources/file/report.ts';
import type { ConfigProblem } from '../controller/sources/types.ts';
import { IncrementalDedupe } from '../controller/store/store.ts';
import { BindSender } from './bind-sender.ts';
import type * as Incremental from '../controller/translate/incremental.ts';
import type { IncrementalTranslator } from '../controller/translate/incremental.ts';
import type { ConfigThreadInit, ConfigThreadReply, ConfigThreadRequest } from './config-thread.ts';
import { StatusWriter } from './status-writer.ts';
import type { TranslationUpdate } from './translator-thread.ts';

const init = workerData as ConfigThreadInit;
/**
 * The translator's module graph is the larger part of this thread's start-up (~0.4–1 s under
 * load): loaded once the first scan has posted every read to the parser thread, so the files are
 * parsed there while this thread loads it (loading first would hold the scan's reads back).
 */
let translatorModule: Promise<typeof Incremental> | undefined;
function loadTranslator(): Promise<typeof Incremental> {
  if (!translatorModule) {
    translatorModule = import('../controller/translate/incremental.ts');
    // Reported by the translation that awaits it, not as an unhandled rejection that ends the thread.
    translatorModule.catch(() => {});
  }
  return translatorModule;
}
const post = (reply: ConfigThreadReply): void => parentPort?.postMessage(reply);

// Log lines go to the serving thread, which logs them through its own logger (format, module
// filter, secret scrubbing); the level is checked here so filtered lines never cross.
const logger = pino({ level: init.logLevel, base: undefined, timestamp: false }, { write: (line: string) => post({ type: 'log', logger: 'source', line }) });
/**
 * The status writer keeps the statuses here, where they are made: the serving thread asks for them
 * when shown. It owns them (stamps lastTransitionTime in place, no stamped copy of each: ~4.5 MiB
 * at 10k routes): nothing else reads the translator's statuses here (its status log is off), and
 * no condition object is in two places of a result (incremental.test.ts checks both).
 */
const statusWriter = new StatusWriter(pino({ level: init.gatewayLogLevel, base: undefined, timestamp: false }, { write: (line: string) => post({ type: 'log', logger: 'gateway', line }) }), () => new Date(), true);
const limits: ConfigLimits = init.limits;
const files = new FileSet(init.paths, limits);
const deduper = new IncrementalDedupe();
const bindSender = new BindSender();
const parser = new ParserThread({ limits, logger, ...(init.parseTimeoutMs !== undefined ? { timeoutMs: init.parseTimeoutMs } : {}), ...(init.parserHeapMiB !== undefined ? { maxHeapMiB: init.parserHeapMiB } : {}) });
// Its modules load while this thread's do and the first scan is on its way.
parser.prestart();
const reporter = new ScanReporter(logger);
/** Holds the objects between scans; dropped when a translation fails (it may be half-changed). */
let translator: IncrementalTranslator | undefined;
let reportedDuplicates = new Set<string>();
const loggedModels = new Set<string>();

/**
 * A translation leaves this thread with tens of MiB V8 keeps (its young generation grown, old
 * pages of the previous translation's garbage): given back in a memory-reducing GC once the thread
 * has been quiet this long (~30 MiB of RSS at 10k routes, ~0.2–0.5 s of this thread's CPU, no
 * request waits on it). Long enough that a burst of edits does not meet it; an edit that arrives
 * during it waits for it. Off unless SWITCHBOARD_IDLE_GC=1: the next edit after it is served
 * ~30–50 ms later (src/common/idle-gc.ts).
 */
const IDLE_GC_DELAY_MS = 2000;
const idleGc = new IdleGc(IDLE_GC_DELAY_MS);
let outstanding = 0;

/** Scans run one at a time, in the order asked. */
let queue: Promise<void> = Promise.resolve();
parentPort?.on('message', (request: ConfigThreadRequest) => {
  // Answered between scans, with what the last translation wrote.
  if (request.type === 'statuses') queue = queue.then(() => post({ type: 'statuses', id: request.id, statuses: statusWriter.current() }));
  else {
    outstanding++;
    idleGc.busy();
    queue = queue.then(() => handle(request)).catch((err: unknown) => {
      // A bug outside translation (reading, the report): the next scan starts over; the queue goes on.
      translator = undefined;
      bindSender.reset();
      post({ id: request.id, type: 'failed', message: `reload failed: ${(err as Error).message}` });
    }).finally(() => {
      if (--outstanding === 0) idleGc.idle();
    });
  }
});

async function handle(request: Extract<ConfigThreadRequest, { type: 'scan' }>): Promise<void> {
  let scan;
  try {
    const scanning = files.scan((file, previousHash) => parser.read(file, previousHash), request.touched === 'all' ? 'all' : new Set(request.touched));
    void loadTranslator();
    scan = await scanning;
  } catch (err) {
    post({ id: request.id, type: 'scan-failed', message: (err as Error).message });
    return;
  }
  reporter.report(scan);
  if (!scan.changed && translator) {
    post({ id: request.id, type: 'unchanged' });
    return;
  }
  const { objects: sourced, duplicates } = deduper.dedupe(scan.snapshot.objects);
  logNewDuplicates(duplicates);
  const objects = sourced.map((s) => s.object);
  logIgnoredModels(objects);
  const problems: ConfigProblem[] = [...scan.snapshot.problems, ...duplicates];
  const sourceErrors = problems.filter((p) => p.severity === 'error').length;
  post({ id: request.id, type: 'translating' });

  let result: TranslationUpdate;
  let statuses: ObjectStatus[];
  try {
    // patchRecords: only the changes leave this thread, no result's routes record is kept.
    // statusChanges: false — statuses stay here (statusWriter), their changes are never read.
    translator ??= new (await loadTranslator()).IncrementalTranslator(init.options, { patchRecords: true, statusChanges: false });
    const next = translator.replace(objects);
    statuses = next.statuses;
    result = {
      // Statuses stay here (statusWriter): none cross the thread boundary.
      version: next.config.version, binds: bindSender.send(next.config.binds, next.changes.full), changes: { ...next.changes, statuses: { set: {}, removed: [] } }, secretPaths: next.secretPaths, secretValues: next.secretValues,
    };
  } catch (err) {
    translator = undefined;
    bindSender.reset();
    post({ id: request.id, type: 'failed', message: `translation failed: ${(err as Error).message}` });
    return;
  }
  try {
    post({ id: request.id, type: 'updated', result, problems, sourceErrors });
  } catch (err) {
    // A value structured clone cannot carry (a function): the result is not the plain data the IR must be.
    translator = undefined;
    bindSender.reset();
    post({ id: request.id, type: 'failed', message: `the translation result could not be sent to the main thread: ${(err as Error).message}` });
    return;
  }
  // After the config is on its way: statuses are not on the path of an edit to the data plane.
  statusWriter.update(statuses);
}

/** Duplicates are logged when they appear, not again on every reload while they stay. */
function logNewDuplicates(duplicates: readonly ConfigProblem[]): void {
  const now = new Set(duplicates.map((d) => d.message));
  for (const duplicate of duplicates) {
    if (reportedDuplicates.has(duplicate.message)) continue;
    logger.error({ file: duplicate.file, document: duplicate.document, line: duplicate.line }, duplicate.message);
  }
  reportedDuplicates = now;
}

/**
 * ProxyModel is experimental (SPEC.md: gated by proxyModels.enabled) and this gateway does not
 * serve it yet: say so once per object instead of dropping it silently.
 */
function logIgnoredModels(objects: readonly KubeObject[]): void {
  if (init.options.proxyModels) return;
  for (const object of objects) {
    if (object.kind !== 'ProxyModel' && object.kind !== 'ProxyModelList') continue;
    const id = `${object.kind}/${object.metadata.namespace ?? 'default'}/${object.metadata.name}`;
    if (loggedModels.has(id)) continue;
    loggedModels.add(id);
    logger.warn({ object: id }, 'ProxyModel objects are experimental and off (enable with --enable-proxy-models); object ignored');
  }
}

post({ type: 'ready' });
