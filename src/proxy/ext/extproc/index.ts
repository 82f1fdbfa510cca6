/** External processing (Envoy ext_proc): a client per policy, a session per request. See session.ts. */
export { DEFAULT_BUFFER_LIMIT, ExtProcClient, ExtProcError, ExtProcImmediateResponse, ExtProcSession } from './session.ts';
export type { ExtProcOptions, HeadersOutcome, ImmediateAnswer } from './session.ts';
export type { BodySendMode, ExtProcConfig, SendMode } from './config.ts';
