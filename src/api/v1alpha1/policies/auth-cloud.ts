/** Backend credentials of the cloud platforms: cloudA (signing, role assumption), cloudB, cloudC. */
import { JsonObject, List, Obj, OneOf, Opt, Str } from '../schema/build.ts';
import { atMostOne, exactlyOne, has } from '../schema/rules.ts';
import { CELExpression, ShortString } from '../scalars.ts';
import { LocalSecretKeyRef, LocalSecretObjectRef } from '../refs.ts';

export const ROLE_IDENTIFIER_PATTERN = '^arn:[a-z][a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]+$';

export const SessionTag = () =>
  Obj({
    key: Str(1, 128),
    value: Opt(Str(0, 256)),
    expression: Opt(CELExpression({ description: 'CEL over the request; an invalid value rejects the request' })),
  }, { rules: [exactlyOne(['value', 'expression'])] });

export const AssumeRole = () =>
  Obj({
    roleIdentifier: Str(1, 2048, { pattern: ROLE_IDENTIFIER_PATTERN, 'x-switchboard-expected': 'a role resource name: a 12-digit account segment, then role/<name>' }),
    sessionName: Opt(Str(2, 64, { pattern: '^[A-Za-z0-9+=,.@_-]+$', 'x-switchboard-expected': '2 to 64 letters, digits or +=,.@-_' })),
    sessionNameExpression: Opt(CELExpression({ description: 'CEL yielding the session name; the request is rejected when it yields no valid name' })),
    tags: Opt(List(SessionTag(), { max: 50, description: 'session tags' })),
  }, { description: 'assume a role with the ambient credentials', rules: [atMostOne(['sessionName', 'sessionNameExpression'])] });

export const CloudAAuth = () =>
  Obj({
    secretRef: Opt(LocalSecretObjectRef('Secret with accessKey, secretKey and optionally sessionToken')),
    assumeRole: Opt(AssumeRole()),
    serviceName: Opt(ShortString({ description: 'signing service name; default from the backend type' })),
    region: Opt(ShortString({ description: 'signing region; default from the backend or the environment' })),
  }, { description: 'cloud-A request signing; default credential discovery when secretRef is unset' });

export const CloudBAuth = () =>
  Obj({
    secretRef: Opt(LocalSecretObjectRef('Secret with clientID, tenantID and clientSecret')),
    managedIdentity: Opt(Obj({ clientId: Str(1, 256), objectId: Str(1, 256), resourceId: Str(1, 1024) })),
    workloadIdentity: Opt(JsonObject('use the projected federated token')),
  }, { description: 'cloud-B tokens; detected from the environment when none is set', rules: [atMostOne(['secretRef', 'managedIdentity', 'workloadIdentity'])] });

export const CloudCAuth = () =>
  Obj({
    type: Opt(OneOf(['AccessToken', 'IdToken'] as const, { description: 'IdToken for serverless run targets' })),
    secretRef: Opt(LocalSecretKeyRef('credentials.json', 'service account credentials; ambient credentials when unset')),
    audience: Opt(ShortString({ description: 'IdToken audience; derived from the backend hostname when unset' })),
  }, {
    description: 'cloud-C access or ID tokens',
    rules: [{
      path: '.audience',
      message: 'audience may only be set with type IdToken',
      cel: "!has(self.audience) || (has(self.type) && self.type == 'IdToken')",
      check: (s) => !has(s, 'audience') || s.type === 'IdToken',
    }],
  });
