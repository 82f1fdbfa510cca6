/**
 * Where inside a policy the IR names a backend (`backendKey`), as property paths (`*`: any key
 * of a map; arrays are transparent). These are the endpoint `backendRef` positions the API schemas
 * declare (src/api/v1alpha1), which the translator's schema-driven lowering turns into
 * `backendKey`, plus `mcp.guardrails.backendKey` (McpGuardrailIR, lowered by hand).
 *
 * Written out rather than read from the schemas at load time so the serving thread, which checks
 * and cuts configs by them, does not load the API schemas (TypeBox, ~50 MiB and ~0.2 s per
 * isolate). reference-paths.test.ts derives them from the schemas and fails when they differ:
 * a new backendRef in the API must be added here.
 */
export const REFERENCE_PATHS = {
  traffic: [
    'extProc.backendKey',
    'extProc.conditional.policy.backendKey',
    'extAuth.backendKey',
    'extAuth.conditional.policy.backendKey',
    'rateLimit.global.backendKey',
    'rateLimit.conditional.policy.global.backendKey',
    'jwtAuthentication.providers.jwks.remote.backendKey',
  ],
  frontend: [
    'accessLog.otlp.backendKey',
    'tracing.backendKey',
  ],
  backend: [
    'tunnel.backendKey',
    'auth.oauthTokenExchange.backendKey',
    'auth.crossAppAccess.identityProvider.backendKey',
    'auth.crossAppAccess.resourceAuthorizationServer.backendKey',
    'ai.promptGuard.request.webhook.backendKey',
    'ai.promptGuard.request.providerAModeration.policies.tunnel.backendKey',
    'ai.promptGuard.request.cloudAGuardrails.policies.tunnel.backendKey',
    'ai.promptGuard.request.cloudCShield.policies.tunnel.backendKey',
    'ai.promptGuard.response.webhook.backendKey',
    'ai.promptGuard.response.cloudAGuardrails.policies.tunnel.backendKey',
    'ai.promptGuard.response.cloudCShield.policies.tunnel.backendKey',
    'mcp.authentication.jwks.backendKey',
    'mcp.guardrails.processors.remote.backendKey',
    'mcp.guardrails.backendKey',
    'extAuth.backendKey',
  ],
} as const satisfies Record<'traffic' | 'frontend' | 'backend', readonly string[]>;
