import type { TrafficMember } from '../../ir/policy.ts';
import { compileDirectResponse } from './traffic/direct-response/direct-response.ts';
import { compileHeaderModifiers } from './traffic/header-modifiers/header-modifiers.ts';
import type { StepCompiler } from './step.ts';
import { compileCors } from './traffic/cors/cors.ts';
import { compileCsrf } from './traffic/csrf/csrf.ts';
import { compileDelay } from './traffic/delay/delay.ts';
import { compileHostRewrite } from './traffic/host-rewrite/host-rewrite.ts';
import { compileRetry } from './traffic/retry/retry.ts';
import { compileTransformation } from './traffic/transformation/transformation.ts';
import { compileRateLimit } from './traffic/rate-limit/rate-limit.ts';
import { compileExtAuth } from './traffic/ext-auth/ext-auth.ts';
import { compileExtProc } from './traffic/ext-proc/ext-proc.ts';
import { compileApiKeyAuthentication } from './traffic/api-key-authentication/api-key-authentication.ts';
import { compileBasicAuthentication } from './traffic/basic-authentication/basic-authentication.ts';
import { compileAuthorization } from './traffic/authorization/authorization.ts';
import { compileJwtAuthentication } from './traffic/jwt-authentication/jwt-authentication.ts';

/**
 * The order traffic members run in. CORS first (a preflight carries no credentials), then
 * authentication, authorization and limits, then the members that answer or change the request.
 */
export const TRAFFIC_ORDER: readonly TrafficMember[] = [
  'cors', 'csrf',
  'jwtAuthentication', 'apiKeyAuthentication', 'basicAuthentication', 'extAuth', 'authorization',
  'rateLimit', 'directResponse', 'delay', 'transformation', 'extProc', 'headerModifiers', 'hostRewrite', 'retry', 'timeouts',
];

/** One compiler per member; each lives in its own folder under src/proxy/policies/traffic/. */
export const STEP_COMPILERS: { readonly [M in TrafficMember]?: StepCompiler<M> } = {
  directResponse: compileDirectResponse,
  headerModifiers: compileHeaderModifiers,
  cors: compileCors,
  csrf: compileCsrf,
  delay: compileDelay,
  hostRewrite: compileHostRewrite,
  retry: compileRetry,
  transformation: compileTransformation,
  rateLimit: compileRateLimit,
  extAuth: compileExtAuth,
  extProc: compileExtProc,
  apiKeyAuthentication: compileApiKeyAuthentication,
  basicAuthentication: compileBasicAuthentication,
  authorization: compileAuthorization,
  jwtAuthentication: compileJwtAuthentication,
};
