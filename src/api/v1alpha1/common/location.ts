/** Where a credential is read from (extraction) or written to (location). */
import { Obj, Opt, Str } from '../schema/build.ts';
import { exactlyOne } from '../schema/rules.ts';
import { CELExpression, HTTPHeaderName } from '../scalars.ts';

const locationMembers = (description: string) => ({
  header: Opt(Obj({
    name: HTTPHeaderName(),
    prefix: Opt(Str(1, 256, { description: 'text before the credential, for example "Bearer "' })),
  }, { description: `a request header${description}` })),
  queryParameter: Opt(Obj({ name: Str(1, 256) }, { description: `a query parameter${description}` })),
  cookie: Opt(Obj({ name: Str(1, 256) }, { description: `a cookie${description}` })),
});

/** AuthorizationLocation: where backend credentials are written. */
export const AuthorizationLocation = (description = 'where the credential is written; default the Authorization header with the Bearer prefix') =>
  Obj(locationMembers(''), { description, rules: [exactlyOne(['header', 'queryParameter', 'cookie'])] });

/** AuthorizationExtractionLocation: where a client credential is read from. */
export const AuthorizationExtractionLocation = (description = 'where the credential is read from') =>
  Obj({
    ...locationMembers(''),
    expression: Opt(CELExpression({ description: 'CEL over the request yielding the credential' })),
  }, { description, rules: [exactlyOne(['header', 'queryParameter', 'cookie', 'expression'])] });
