/** External authorization (gRPC or HTTP), directly or as a conditional list. */
import { Int, List, MapOf, Obj, OneOf, Opt, Str } from '../schema/build.ts';
import { fallbackLast, has } from '../schema/rules.ts';
import type { CrossFieldRule } from '../schema/rules.ts';
import { ByteSize, CELExpression, ShortString } from '../scalars.ts';
import { ENDPOINT_MEMBERS, endpointProperties } from '../refs.ts';
import { FAILURE_MODES, FailureMode } from './prompt-guard.ts';

/**
 * `withDefaults` is false for the top level of the conditional shape: a defaulted failureMode there
 * would sit beside `conditional` and break the rule that conditional stands alone.
 */
const extAuthMembers = (withDefaults = true) => ({
  ...endpointProperties,
  failureMode: Opt(withDefaults ? FailureMode() : OneOf(FAILURE_MODES, { description: 'default FailClosed' })),
  grpc: Opt(Obj({
    contextExtensions: Opt(MapOf(Str(0, 4096), { max: 64 })),
    requestMetadata: Opt(MapOf(CELExpression(), { max: 64, description: 'becomes metadata_context.filter_metadata' })),
  })),
  http: Opt(Obj({
    path: Opt(CELExpression({ description: 'default the original path' })),
    redirect: Opt(CELExpression({ description: 'redirect path on failure' })),
    body: Opt(CELExpression({ description: 'strings and bytes are sent as they are, other values JSON-encoded' })),
    allowedRequestHeaders: Opt(List(ShortString(), { max: 64, description: 'default Authorization' })),
    addRequestHeaders: Opt(MapOf(CELExpression(), { max: 64 })),
    allowedResponseHeaders: Opt(List(ShortString(), { max: 64, description: 'copied to the backend request' })),
    responseMetadata: Opt(MapOf(CELExpression(), { max: 64, description: 'exposed as the extauthz variable' })),
  }, { description: 'HTTP service; it must answer 200 to authorize' })),
  forwardBody: Opt(Obj({ maxSize: ByteSize({ description: 'larger bodies are rejected' }) }, { description: 'buffer and send the request body' })),
  cache: Opt(Obj({
    key: List(CELExpression(), { min: 1, max: 16, description: 'must capture every property the service decides on' }),
    ttl: Str(1, 16384, { description: 'CEL or Duration string yielding a duration or timestamp' }),
    maxEntries: Opt(Int(1, undefined, { default: 10000 })),
  })),
});

const endpointOneOf: CrossFieldRule = {
  path: '',
  message: 'exactly one of backendRef, url must be set',
  cel: '(has(self.backendRef) ? 1 : 0) + (has(self.url) ? 1 : 0) == 1',
  check: (s) => ENDPOINT_MEMBERS.filter((m) => has(s, m)).length === 1,
  members: ENDPOINT_MEMBERS,
};

export const ExtAuth = () => Obj(extAuthMembers(), { description: 'external authorization', rules: [endpointOneOf] });

/** Builds the "X or conditional" shape shared by extAuth, extProc and directResponse. */
export function conditionalList<T extends ReturnType<typeof Obj>>(policy: T) {
  return List(Obj({ condition: Opt(CELExpression({ description: 'the first entry whose condition holds runs' })), policy }), {
    min: 1, max: 16, description: 'evaluated in order; one final entry may omit condition as the fallback', rules: [fallbackLast('condition')],
  });
}

/** Either the direct members (validated by `direct`) or `conditional` alone. */
export function directOrConditional(directMembers: readonly string[], direct: CrossFieldRule): CrossFieldRule {
  return {
    path: '',
    message: `conditional excludes the other members; otherwise ${direct.message}`,
    cel: `has(self.conditional) ? (${directMembers.map((m) => `!has(self.${m})`).join(' && ')}) : (${direct.cel})`,
    check: (s) => (has(s, 'conditional') ? directMembers.every((m) => !has(s, m)) : direct.check(s)),
  };
}

/** `conditional` excludes every direct member. */
export function conditionalAlone(directMembers: readonly string[]): CrossFieldRule {
  return {
    path: '',
    message: `conditional excludes ${directMembers.join(', ')}`,
    cel: `!has(self.conditional) || (${directMembers.map((m) => `!has(self.${m})`).join(' && ')})`,
    check: (s) => !has(s, 'conditional') || directMembers.every((m) => !has(s, m)),
  };
}

export const ExtAuthOrConditional = () => {
  const members = extAuthMembers(false);
  return Obj({ ...members, conditional: Opt(conditionalList(ExtAuth())) }, {
    description: 'external authorization, or a conditional list of them',
    rules: [directOrConditional(Object.keys(members), endpointOneOf)],
  });
};
