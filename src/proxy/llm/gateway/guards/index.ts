/** What the LLM handler and the Realtime relay use of the prompt guards (docs/llm.md "Prompt guards"). */
import './kinds.ts';

export { GuardConfigError, promptGuardOf, type CompiledPromptGuard } from './compile.ts';
export { guardJsonBody, runGuards, type BodyGuardOutcome, type GuardOutcome, type GuardRun } from './run.ts';
export { GUARD_REJECTED, StreamGuard, streamErrorEvent, type StreamVerdict } from './stream.ts';
export { GUARDED_REQUEST_ROUTES, GUARDED_RESPONSE_ROUTES } from './texts.ts';
