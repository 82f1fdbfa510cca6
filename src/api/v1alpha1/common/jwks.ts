/** JWT validation pieces shared by traffic jwtAuthentication and the (deprecated) MCP authentication. */
import { JsonValue, MapOf, Obj, OneOf, Opt, Str } from '../schema/build.ts';
import { exactlyOne } from '../schema/rules.ts';
import { Duration } from '../scalars.ts';
import { PolicyBackendEndpoint } from '../refs.ts';
import { IDP_VALUES } from './values.ts';

export { IDP_VALUES };

export const JWT_MODES = ['Strict', 'Optional', 'Permissive'] as const;

export const RemoteJwks = () =>
  PolicyBackendEndpoint({
    jwksPath: Opt(Str(1, 2000, { description: 'path of the JWKS, for example /.well-known/jwks.json' })),
    cacheDuration: Opt(Duration({ default: '5m', description: 'how long a fetched JWKS is cached' })),
  }, 'JWKS fetched from a server');

export const Jwks = () =>
  Obj({
    remote: Opt(RemoteJwks()),
    inline: Opt(Str(2, 65536, { description: 'a JWKS document' })),
  }, { description: 'the keys that sign accepted tokens', rules: [exactlyOne(['remote', 'inline'])] });

export const IdpProvider = () => OneOf(IDP_VALUES, { description: 'identity provider, selects its OAuth metadata quirks' });

export const ResourceMetadata = () => MapOf(JsonValue(), { description: 'OAuth protected resource metadata served to MCP clients' });

export const JwtMode = (description = 'Strict: a valid credential is required; Optional: a present credential is validated; Permissive: never rejected') =>
  OneOf(JWT_MODES, { default: 'Strict', description });
