/** Traffic: request-path policies of a Gateway, listener, ListenerSet, route or route rule. */
import { Int, JsonObject, List, Obj, OneOf, Opt, Str } from '../schema/build.ts';
import { CELExpression, Duration, HTTPHeaderName, ShortString } from '../scalars.ts';
import { HTTPHeaderFilter } from '../refs.ts';
import { Authorization } from '../common/authorization.ts';
import { Transform, Transformation } from '../policies/transformation.ts';
import { ExtAuthOrConditional, conditionalAlone, conditionalList } from '../policies/ext-auth.ts';
import { ExtProcOrConditional } from './ext-proc.ts';
import { RateLimitOrConditional } from './rate-limit.ts';
import { ApiKeyAuthentication, BasicAuthentication, JwtAuthentication } from './auth.ts';

const directResponseMembers = () => ({
  status: Opt(Int(200, 599)),
  body: Opt(Str(1, 4096)),
  bodyExpression: Opt(CELExpression({ description: 'strings and bytes written directly, other values as JSON' })),
  headers: Opt(List(Obj({ name: HTTPHeaderName(), value: CELExpression() }), { min: 1, max: 16 })),
});

const DirectResponse = () => Obj(directResponseMembers());

const DirectResponseOrConditional = () => {
  const members = directResponseMembers();
  return Obj({ ...members, conditional: Opt(conditionalList(DirectResponse())) }, {
    description: 'answer the request directly, or a conditional list of answers',
    rules: [conditionalAlone(Object.keys(members))],
  });
};

/** Transformation directly, or a conditional list of them. */
const TransformationOrConditional = () =>
  Obj({ request: Opt(Transform()), response: Opt(Transform()), conditional: Opt(conditionalList(Transformation())) }, {
    description: 'request/response transformation, or a conditional list of them',
    rules: [conditionalAlone(['request', 'response'])],
  });

export const Traffic = () =>
  Obj({
    phase: Opt(OneOf(['PreRouting', 'PostRouting'] as const, { default: 'PostRouting', description: 'PreRouting requires a Gateway or Listener target' })),
    transformation: Opt(TransformationOrConditional()),
    extProc: Opt(ExtProcOrConditional()),
    extAuth: Opt(ExtAuthOrConditional()),
    rateLimit: Opt(RateLimitOrConditional()),
    cors: Opt(JsonObject('CORS (fields as the Gateway API HTTPCORSFilter)')),
    csrf: Opt(Obj({
      additionalOrigins: Opt(List(ShortString({ pattern: '^[a-zA-Z][a-zA-Z0-9+.-]*://[^/:?#\\s]+(:[0-9]{1,5})?$', 'x-switchboard-expected': 'an origin <scheme>://<host>(:<port>)' }), { min: 1, max: 16 })),
    })),
    headerModifiers: Opt(Obj({ request: Opt(HTTPHeaderFilter()), response: Opt(HTTPHeaderFilter()) })),
    hostRewrite: Opt(Obj({ mode: OneOf(['Auto', 'None'] as const) })),
    timeouts: Opt(Obj({ request: Opt(Duration({ description: 'from the start of sending to the full response' })) })),
    retry: Opt(JsonObject('retry settings')),
    authorization: Opt(Authorization()),
    jwtAuthentication: Opt(JwtAuthentication()),
    basicAuthentication: Opt(BasicAuthentication()),
    apiKeyAuthentication: Opt(ApiKeyAuthentication()),
    directResponse: Opt(DirectResponseOrConditional()),
    delay: Opt(Obj({ duration: CELExpression({ description: "a duration string such as '2s', a CEL duration or milliseconds" }) }, { description: 'fault injection' })),
  });

