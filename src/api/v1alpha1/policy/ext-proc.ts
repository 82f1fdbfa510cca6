/** External processing (Envoy ext_proc), directly or as a conditional list. */
import { Bool, MapOf, Obj, OneOf, Opt } from '../schema/build.ts';
import { exactlyOne } from '../schema/rules.ts';
import { CELExpression } from '../scalars.ts';
import { endpointProperties } from '../refs.ts';
import { FAILURE_MODES, FailureMode } from '../policies/prompt-guard.ts';
import { conditionalList, directOrConditional } from '../policies/ext-auth.ts';

export const BODY_SEND_MODES = ['None', 'Buffered', 'BufferedPartial', 'FullDuplexStreamed'] as const;
/** SPEC.md does not list the trailer modes; they take the header modes' values. */
const SEND_MODES = ['Send', 'Skip'] as const;

/** `withDefaults` is false for the top level of the conditional shape (see ExtAuthOrConditional). */
const extProcMembers = (withDefaults = true) => ({
  ...endpointProperties,
  failureMode: Opt(withDefaults ? FailureMode('FailOpen continues only until the request body starts streaming') : OneOf(FAILURE_MODES, { description: 'default FailClosed' })),
  processingOptions: Opt(Obj({
    requestBodyMode: Opt(OneOf(BODY_SEND_MODES, { default: 'FullDuplexStreamed' })),
    responseBodyMode: Opt(OneOf(BODY_SEND_MODES, { default: 'FullDuplexStreamed' })),
    requestHeaderMode: Opt(OneOf(SEND_MODES, { default: 'Send' })),
    responseHeaderMode: Opt(OneOf(SEND_MODES, { default: 'Send' })),
    requestTrailerMode: Opt(OneOf(SEND_MODES, { default: 'Send' })),
    responseTrailerMode: Opt(OneOf(SEND_MODES, { default: 'Send' })),
    allowModeOverride: Opt(Bool({ default: false })),
  })),
  metadataContext: Opt(MapOf(MapOf(CELExpression(), { max: 64 }), { max: 64, description: 'namespace to key to CEL' })),
  requestAttributes: Opt(MapOf(CELExpression(), { max: 64 })),
  responseAttributes: Opt(MapOf(CELExpression(), { max: 64 })),
});

const endpointOneOf = exactlyOne(['backendRef', 'url']);

export const ExtProc = () => Obj(extProcMembers(), { rules: [endpointOneOf] });

export const ExtProcOrConditional = () => {
  const members = extProcMembers(false);
  return Obj({ ...members, conditional: Opt(conditionalList(ExtProc())) }, {
    description: 'external processing, or a conditional list of it',
    rules: [directOrConditional(Object.keys(members), endpointOneOf)],
  });
};
