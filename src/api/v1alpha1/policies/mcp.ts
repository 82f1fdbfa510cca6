/** BackendMCP: MCP-level authorization, (deprecated) authentication and guardrail processors. */
import { List, MapOf, Obj, OneOf, Opt, Str } from '../schema/build.ts';
import { CELExpression, HeaderName, ShortString } from '../scalars.ts';
import { LocalSecretKeyRef, endpointProperties, endpointRule } from '../refs.ts';
import { Authorization } from '../common/authorization.ts';
import { IdpProvider, JwtMode, RemoteJwks, ResourceMetadata } from '../common/jwks.ts';
import { FailureMode } from './prompt-guard.ts';

export const MCP_METHOD_PHASES = ['Off', 'Request', 'Response', 'Full'] as const;

export const MCPAuthentication = () =>
  Obj({
    resourceMetadata: Opt(ResourceMetadata()),
    provider: Opt(IdpProvider()),
    issuer: Opt(ShortString()),
    audiences: Opt(List(Str(1, 1024), { min: 1, max: 64, description: 'any audience when unset' })),
    jwks: RemoteJwks(),
    mode: Opt(JwtMode()),
    clientId: Opt(Str(1, 1024, { description: 'short-circuits Dynamic Client Registration' })),
    clientSecretRef: Opt(LocalSecretKeyRef('clientSecret', 'injected into token requests proxied to the provider')),
  }, { description: 'deprecated: use the traffic policy jwtAuthentication.mcp' });

const GuardrailProcessor = () =>
  Obj({
    remote: Obj({
      ...endpointProperties,
      failureMode: Opt(FailureMode()),
      metadata: Opt(MapOf(CELExpression(), { max: 64 })),
      allowedRequestHeaders: Opt(List(HeaderName(), { max: 64, description: 'empty forwards all headers and pseudo-headers' })),
      disallowedRequestHeaders: Opt(List(HeaderName(), { max: 64, description: 'never forwarded' })),
    }, { rules: [endpointRule()] }),
    methods: MapOf(OneOf(MCP_METHOD_PHASES), {
      min: 1, max: 64,
      description: "JSON-RPC method (exact, 'tools/*', '*/list' or '*') to phase; the most specific match wins; unmatched methods bypass",
    }),
  });

export const BackendMCP = () =>
  Obj({
    authorization: Opt(Authorization('MCP-level authorization: list results are filtered, get/call on a non-matching item rejected')),
    authentication: Opt(MCPAuthentication()),
    guardrails: Opt(Obj({ processors: List(GuardrailProcessor(), { min: 1, max: 16, description: 'run in order; the first rejection short-circuits' }) })),
  });
