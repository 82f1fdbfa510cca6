/** Client authentication members of traffic: API key, basic, JWT. */
import { List, MapOf, Obj, OneOf, Opt, Str } from '../schema/build.ts';
import { exactlyOne } from '../schema/rules.ts';
import { ShortString } from '../scalars.ts';
import { LocalSecretKeyRef, LocalSecretObjectRef } from '../refs.ts';
import { AuthorizationExtractionLocation } from '../common/location.ts';
import { IdpProvider, Jwks, JwtMode, ResourceMetadata } from '../common/jwks.ts';

const Labels = () => MapOf(Str(0, 63), { description: 'labels the objects must carry' });

export const ApiKeyAuthentication = () =>
  Obj({
    secretRef: Opt(LocalSecretObjectRef('a Secret whose entries are keys')),
    secretSelector: Opt(Obj({ matchLabels: Labels() }, { description: 'Secrets selected by label' })),
    configMapSelector: Opt(Obj({ matchLabels: Labels() }, { description: 'ConfigMaps selected by label; every entry must use keyHash' })),
    mode: Opt(JwtMode()),
    location: Opt(AuthorizationExtractionLocation('default the Authorization header with the Bearer prefix')),
  }, { rules: [exactlyOne(['secretRef', 'secretSelector', 'configMapSelector'])] });

export const BasicAuthentication = () =>
  Obj({
    users: Opt(List(Str(3, 1024, { pattern: '^[^:]+:.+$', 'x-switchboard-expected': 'a password-file line <user>:<hash>' }), { min: 1, max: 256 })),
    secretRef: Opt(LocalSecretKeyRef('.htaccess', 'Secret holding a whole password file')),
    mode: Opt(OneOf(['Strict', 'Optional'] as const, { default: 'Strict' })),
    realm: Opt(Str(1, 256, { default: 'Restricted', description: 'returned in WWW-Authenticate on failure' })),
    location: Opt(AuthorizationExtractionLocation('default the Authorization header with the Basic prefix')),
  }, { rules: [exactlyOne(['users', 'secretRef'])] });

export const JwtAuthentication = () =>
  Obj({
    mode: Opt(JwtMode()),
    providers: List(Obj({
      issuer: ShortString({ description: 'the iss claim' }),
      audiences: Opt(List(Str(1, 1024), { min: 1, max: 64, description: 'any audience when unset' })),
      jwks: Jwks(),
    }), { min: 1, max: 64 }),
    location: Opt(AuthorizationExtractionLocation()),
    mcp: Opt(Obj({
      resourceMetadata: Opt(ResourceMetadata()),
      provider: Opt(IdpProvider()),
      clientId: Opt(Str(1, 1024, { description: 'short-circuits Dynamic Client Registration' })),
      // Not in SPEC's jwtAuthentication.mcp list, but MCPAuthentication (the deprecated backend form this replaces) has it.
      clientSecretRef: Opt(LocalSecretKeyRef('clientSecret', 'injected into token requests proxied to the provider')),
    }, { description: 'serve MCP OAuth metadata discovery endpoints' })),
  });
