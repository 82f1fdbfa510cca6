/** AIPromptGuard: regex, webhook and vendor moderation guards on requests and responses. */
import { Int, List, Obj, OneOf, Opt, Str } from '../schema/build.ts';
import { exactlyOne } from '../schema/rules.ts';
import { LongString, ShortString } from '../scalars.ts';
import { BackendObjectReference, HTTPHeaderMatch } from '../refs.ts';
import { BackendHTTP, BackendTCP, BackendTLS, BackendTunnel } from './connection.ts';
import { RestrictedAuth } from './auth.ts';

export const BUILTIN_PATTERNS = ['Ssn', 'CreditCard', 'PhoneNumber', 'Email', 'CaSin'] as const;
export const FAILURE_MODES = ['FailClosed', 'FailOpen'] as const;
export const FailureMode = (description = 'FailClosed denies when the service is unavailable or fails; FailOpen continues') =>
  OneOf(FAILURE_MODES, { default: 'FailClosed', description });

const CustomResponse = (what: 'request' | 'response') =>
  Obj({
    message: Opt(Str(1, 4096, { default: `The ${what} was rejected due to inappropriate content` })),
    statusCode: Opt(Int(200, 599, { default: 403 })),
  }, { default: {}, description: 'the answer when the guard rejects' });

const Regex = () =>
  Obj({
    matches: Opt(List(LongString(), { description: 'regular expressions (RE2 syntax)' })),
    builtins: Opt(List(OneOf(BUILTIN_PATTERNS), { description: 'built-in detectors' })),
    action: Opt(OneOf(['Mask', 'Reject'] as const, { default: 'Mask', description: 'Mask is not applied to streamed responses' })),
  });

const Webhook = () =>
  Obj({
    backendRef: BackendObjectReference('the webhook Service or ProxyBackend'),
    forwardHeaderMatches: Opt(List(HTTPHeaderMatch(), { description: 'headers forwarded to the webhook; none by default' })),
    failureMode: Opt(FailureMode()),
  });

const connection = () => ({ tcp: Opt(BackendTCP()), tls: Opt(BackendTLS()), http: Opt(BackendHTTP()), tunnel: Opt(BackendTunnel()) });

const ProviderAModeration = () =>
  Obj({
    model: Opt(Str(1, 256)),
    policies: Opt(Obj({ ...connection(), auth: Opt(RestrictedAuth(['key', 'secretRef'] as const)) })),
  });

const CloudAGuardrails = () =>
  Obj({
    identifier: ShortString(),
    version: ShortString(),
    region: ShortString(),
    policies: Opt(Obj({ ...connection(), auth: Opt(RestrictedAuth(['key', 'secretRef', 'cloudA'] as const)) })),
  });

const CloudCShield = () =>
  Obj({
    templateId: ShortString(),
    projectId: ShortString(),
    location: Opt(ShortString({ default: 'us-central1' })),
    policies: Opt(Obj({ ...connection(), auth: Opt(RestrictedAuth(['cloudC'] as const)) })),
  });

const REQUEST_GUARDS = ['regex', 'webhook', 'providerAModeration', 'cloudAGuardrails', 'cloudCShield'] as const;
const RESPONSE_GUARDS = ['regex', 'webhook', 'cloudAGuardrails', 'cloudCShield'] as const;

export const PromptguardRequest = () =>
  Obj({
    regex: Opt(Regex()),
    webhook: Opt(Webhook()),
    providerAModeration: Opt(ProviderAModeration()),
    cloudAGuardrails: Opt(CloudAGuardrails()),
    cloudCShield: Opt(CloudCShield()),
    response: Opt(CustomResponse('request')),
  }, { rules: [exactlyOne(REQUEST_GUARDS)] });

export const PromptguardResponse = () =>
  Obj({
    regex: Opt(Regex()),
    webhook: Opt(Webhook()),
    cloudAGuardrails: Opt(CloudAGuardrails()),
    cloudCShield: Opt(CloudCShield()),
    response: Opt(CustomResponse('response')),
  }, { rules: [exactlyOne(RESPONSE_GUARDS)] });

export const AIPromptGuard = () =>
  Obj({
    streaming: Opt(OneOf(['Enabled'] as const, { description: 'apply guards to streamed responses and realtime messages; disabled when unset' })),
    request: Opt(List(PromptguardRequest(), { min: 1, max: 8 })),
    response: Opt(List(PromptguardResponse(), { min: 1, max: 8 })),
  });
