/**
 * A provider call through undici's stream API (streams and passthrough): a held-back failure is
 * kept for failover, passthrough is relayed as it comes, a stream is translated event by event
 * (judged by the stream guards when they apply) with provider health told when it is cut.
 */
import type { Dispatcher } from 'undici';
import type { ForwardPlan } from '../../translate/plan.ts';
import { readProviderAnswer } from '../bounded-body.ts';
import { maskSecrets, type SentSecrets } from '../credential-mask.ts';
import { ProviderStalledError } from '../provider-health.ts';
import { inSlices } from '../stream-slices.ts';
import { account } from './accounting.ts';
import { attemptFailed } from './attempt-errors.ts';
import { streamGuardFor, streamPasses } from './guards.ts';
import { pickHeaders } from './headers.ts';
import { sendBuffered } from './respond.ts';
import type { Attempt, Outcome, Tracked } from './state.ts';

export async function streamAttempt(a: Attempt, plan: ForwardPlan, dispatcher: Dispatcher, options: Dispatcher.RequestOptions, secrets: SentSecrets, tracked: Tracked): Promise<Outcome> {
  const { gw } = a;
  let response: Dispatcher.ResponseData;
  try {
    response = await dispatcher.request(options);
  } catch (err) {
    attemptFailed(gw, tracked, err, a.sink.closed);
    throw err;
  }
  // The head came: a stall eviction no longer ends this attempt (provider-health.ts, HeadWait).
  if (tracked.interrupt) {
    gw.health.headDone(tracked.index, tracked);
    // One ended it as the head arrived (its body is aborted): nothing was sent, so it fails over as a moment earlier.
    const reason: unknown = (options.signal as AbortSignal | undefined)?.reason;
    if (reason instanceof ProviderStalledError) {
      response.body.destroy();
      attemptFailed(gw, tracked, reason, false);
      throw reason;
    }
  }
  const status = response.statusCode;
  const headers = response.headers as Record<string, string | string[] | undefined>;
  gw.health.answered(tracked.index, tracked.started, status, headers, tracked.spec);
  if (a.schedule.holdsBack(status)) {
    const raw = await readProviderAnswer(response.body, gw.maxResponseBytes);
    return { kind: 'retryable', status, answer: async () => sendBuffered(a, plan, status, headers, raw, secrets) };
  }
  if (plan.upstreamFormat === 'passthrough') {
    a.sink.head(status, pickHeaders(headers, ['content-type', 'cache-control']));
    for await (const chunk of response.body) {
      const full = a.sink.write(chunk as Buffer);
      if (full) await full;
    }
    a.sink.end();
    return { kind: 'answered', status };
  }
  if (!plan.stream || status >= 300) {
    const sent = sendBuffered(a, plan, status, headers, await readProviderAnswer(response.body, gw.maxResponseBytes), secrets);
    return { kind: 'answered', status: typeof sent === 'number' ? sent : await sent };
  }
  const translator = plan.createStreamTranslator();
  a.sink.head(status, plan.streamHeaders);
  // `streaming: Enabled`: response guards judge the text before each chunk is written (guards/stream.ts).
  const streamGuard = streamGuardFor(a, plan, headers);
  let rejected = false;
  try {
    // A large read's first events are written before the rest of it is translated (stream-slices.ts).
    for await (const chunk of inSlices(response.body, () => a.sink.flush())) {
      // An error event mid-stream may echo the key too (a key split across chunks is not caught).
      for (const out of translator.push(chunk as Buffer)) {
        a.span?.chunk(out);
        a.meter.chunk();
        const pass = streamGuard ? await streamPasses(a, streamGuard.check(out)) : out;
        if (!pass) { rejected = true; break; }
        // A guard judging in batches holds output back (an empty write would still cost a round).
        // A write waits only while the client is slow (ClientSink.write: no promise per event otherwise).
        const full = pass.length > 0 ? a.sink.write(maskSecrets(pass, secrets)) : undefined;
        if (full) await full;
      }
      // The stream failed (an error event was written): stop reading, which closes the upstream.
      if (rejected || translator.done === true) break;
    }
  } catch (err) {
    // The upstream stream broke (reset, idle timeout): `end` renders the cut as an error event.
    if (!a.sink.closed) gw.health.cut(tracked.index, tracked.spec);
    gw.logger.warn({ backend: gw.ir.key, provider: a.provider.name, err: String(err) }, 'LLM upstream stream failed');
  }
  if (!rejected) for (const out of translator.end()) {
    a.span?.chunk(out);
    const pass = streamGuard ? await streamPasses(a, streamGuard.check(out)) : out;
    if (!pass) { rejected = true; break; }
    const full = pass.length > 0 ? a.sink.write(maskSecrets(pass, secrets)) : undefined;
    if (full) await full;
  }
  const rest = streamGuard && !rejected ? await streamPasses(a, streamGuard.flush()) : undefined;
  if (rest && rest.length > 0) await a.sink.write(maskSecrets(rest, secrets));
  a.sink.end();
  account(a, translator.usage(), plan);
  return { kind: 'answered', status };
}
