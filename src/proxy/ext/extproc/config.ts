/** The IR member `extProc` (src/ir/policy.ts ExtProcPolicy) with its fields typed, and mode handling. */
import type { ExtProcPolicy } from '../../../ir/policy.ts';
import { ProcessingMode_BodySendMode, ProcessingMode_HeaderSendMode, type ProcessingMode } from '../gen/envoy/extensions/filters/http/ext_proc/v3/processing_mode_pb.js';

/** The IR member `extProc` (one direct entry, src/ir/members.ts). */
export type ExtProcConfig = ExtProcPolicy;
type ProcessingOptions = NonNullable<ExtProcConfig['processingOptions']>;
export type BodySendMode = NonNullable<ProcessingOptions['requestBodyMode']>;
export type SendMode = NonNullable<ProcessingOptions['requestHeaderMode']>;

export interface Modes {
  requestHeaders: SendMode;
  responseHeaders: SendMode;
  requestBody: BodySendMode;
  responseBody: BodySendMode;
  requestTrailers: SendMode;
  responseTrailers: SendMode;
}

export function initialModes(config: ExtProcConfig): Modes {
  const o = config.processingOptions ?? {};
  return {
    requestHeaders: o.requestHeaderMode ?? 'Send',
    responseHeaders: o.responseHeaderMode ?? 'Send',
    requestBody: o.requestBodyMode ?? 'FullDuplexStreamed',
    responseBody: o.responseBodyMode ?? 'FullDuplexStreamed',
    // SPEC.md: trailers are sent by default (Envoy's own default is SKIP).
    requestTrailers: o.requestTrailerMode ?? 'Send',
    responseTrailers: o.responseTrailerMode ?? 'Send',
  };
}

const BODY: Partial<Record<ProcessingMode_BodySendMode, BodySendMode>> = {
  [ProcessingMode_BodySendMode.NONE]: 'None',
  [ProcessingMode_BodySendMode.STREAMED]: 'FullDuplexStreamed',
  [ProcessingMode_BodySendMode.BUFFERED]: 'Buffered',
  [ProcessingMode_BodySendMode.BUFFERED_PARTIAL]: 'BufferedPartial',
};
const HEADER = (m: ProcessingMode_HeaderSendMode): SendMode | undefined =>
  m === ProcessingMode_HeaderSendMode.SEND ? 'Send' : m === ProcessingMode_HeaderSendMode.SKIP ? 'Skip' : undefined;

/**
 * A processor's mode_override. Header and trailer modes DEFAULT keep the current mode; body modes NONE (the
 * proto default, indistinguishable from "unset") switch processing of that body off, as in Envoy.
 */
export function applyOverride(modes: Modes, o: ProcessingMode): void {
  modes.requestHeaders = HEADER(o.requestHeaderMode) ?? modes.requestHeaders;
  modes.responseHeaders = HEADER(o.responseHeaderMode) ?? modes.responseHeaders;
  modes.requestBody = BODY[o.requestBodyMode] ?? modes.requestBody;
  modes.responseBody = BODY[o.responseBodyMode] ?? modes.responseBody;
  modes.requestTrailers = HEADER(o.requestTrailerMode) ?? modes.requestTrailers;
  modes.responseTrailers = HEADER(o.responseTrailerMode) ?? modes.responseTrailers;
}
