/** BackendAuth: how the gateway authenticates to a backend (at most one mechanism, plus extra credentials). */
import { List, Obj, Opt, Str } from '../schema/build.ts';
import { atMostOne, exactlyOne } from '../schema/rules.ts';
import { LocalSecretKeyRef } from '../refs.ts';
import { AuthorizationLocation } from '../common/location.ts';
import { CloudAAuth, CloudBAuth, CloudCAuth } from './auth-cloud.ts';
import { CrossAppAccess, JwtSign, OAuthTokenExchange } from './auth-oauth.ts';

export const BACKEND_AUTH_MECHANISMS = ['key', 'secretRef', 'passthrough', 'cloudA', 'cloudB', 'cloudC', 'oauthTokenExchange', 'crossAppAccess', 'jwtSign'] as const;
type Mechanism = (typeof BACKEND_AUTH_MECHANISMS)[number];

const mechanisms = () => ({
  key: Opt(Str(1, 2048, { description: 'inline Authorization value (least secure)' })),
  secretRef: Opt(LocalSecretKeyRef('Authorization', 'a Bearer prefix is stripped only from the default key')),
  passthrough: Opt(Obj({}, { description: 're-adds the client token validated by a client-auth policy' })),
  cloudA: Opt(CloudAAuth()),
  cloudB: Opt(CloudBAuth()),
  cloudC: Opt(CloudCAuth()),
  oauthTokenExchange: Opt(OAuthTokenExchange()),
  crossAppAccess: Opt(CrossAppAccess()),
  jwtSign: Opt(JwtSign()),
});

const location = () => Opt(AuthorizationLocation('where key, secretRef or passthrough credentials are written; default the Authorization header with the Bearer prefix'));

const credentials = () =>
  Opt(List(Obj({ location: AuthorizationLocation('where this credential is written'), secretRef: LocalSecretKeyRef() }), {
    min: 1, max: 8, description: 'extra credentials injected independently of the primary mechanism',
  }));

type Mechanisms = ReturnType<typeof mechanisms>;
function pick<K extends Mechanism>(keys: readonly K[]): Pick<Mechanisms, K> {
  const all = mechanisms();
  return Object.fromEntries(keys.map((k) => [k, all[k]])) as Pick<Mechanisms, K>;
}

export const BackendAuth = () =>
  Obj({ ...mechanisms(), location: location(), credentials: credentials() }, {
    description: 'backend authentication',
    rules: [atMostOne(BACKEND_AUTH_MECHANISMS)],
  });

/** BackendAuth without crossAppAccess and jwtSign (ProxyModel policies). */
export const ModelBackendAuth = () => {
  const members = ['key', 'secretRef', 'passthrough', 'cloudA', 'cloudB', 'cloudC', 'oauthTokenExchange'] as const;
  return Obj({ ...pick(members), location: location(), credentials: credentials() }, {
    description: 'backend authentication (without crossAppAccess and jwtSign)',
    rules: [atMostOne(members)],
  });
};

/** An auth block that must use exactly one of `members` (prompt guard services). */
export function RestrictedAuth<K extends Mechanism>(members: readonly K[]) {
  return Obj({ ...pick(members), location: location() }, { rules: [exactlyOne(members)] });
}
