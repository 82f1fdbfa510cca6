/** Header and body transformation of requests and responses. */
import { List, Obj, Opt } from '../schema/build.ts';
import { CELExpression, HeaderName } from '../scalars.ts';

const HeaderTransformation = () => Obj({ name: HeaderName(), value: CELExpression() });

export const Transform = () =>
  Obj({
    set: Opt(List(HeaderTransformation(), { max: 16 })),
    add: Opt(List(HeaderTransformation(), { max: 16, description: 'appends to an existing header' })),
    remove: Opt(List(HeaderName(), { max: 16 })),
    body: Opt(CELExpression({ description: 'the new body' })),
  }, { minProperties: 1 });

export const Transformation = () => Obj({ request: Opt(Transform()), response: Opt(Transform()) });
