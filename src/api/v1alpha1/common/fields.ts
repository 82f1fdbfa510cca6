/** Request-body field defaults, overrides and CEL transformations (AI policies and models). */
import { JsonValue, List, Obj, Str } from '../schema/build.ts';
import { CELExpression, ShortString } from '../scalars.ts';

export const FieldDefault = () => Obj({ field: ShortString({ description: 'JSON field of the request body' }), value: JsonValue('the value to set') });

export const FieldDefaults = (description: string) => List(FieldDefault(), { min: 1, max: 64, description });

export const FieldTransformation = () =>
  Obj({ field: ShortString({ description: 'JSON field of the request body' }), expression: CELExpression({ description: 'result overwrites the field' }) });

export const FieldTransformations = (description: string) => List(FieldTransformation(), { min: 1, max: 64, description });

export const Message = () => Obj({ role: Str(1, 256), content: Str(1, 1_048_576) });
