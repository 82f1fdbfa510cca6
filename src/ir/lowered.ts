/**
 * The type of a policy member after the translator's schema-driven lowering
 * (src/controller/translate/policy/lower.ts), computed from the member's API type
 * (`Static<typeof Schema>`). It mirrors the four mechanical changes of src/ir/policy.ts:
 *
 *   - a Secret key reference `xRef` ({name, group?, kind?, key?}) becomes `x`: the entry's value;
 *   - a Secret object reference `xRef` ({name, group?, kind?}) becomes `x`: the Secret's entries;
 *   - an endpoint `backendRef` (BackendObjectReference) becomes `backendKey`;
 *   - a ByteSize (`string | number` in the API) becomes a number of bytes;
 *   - a Duration field `x` becomes `xMs` (milliseconds). A Duration is a plain `string` in the
 *     API types, so the caller names the Duration fields of the member (`D`); every other string
 *     field is kept as written.
 *
 * `unknown` (a JsonValue / JsonObject the API keeps as written) becomes `Json`, and every level is
 * readonly: the IR is plain, JSON-serialisable, readonly data.
 */
import type { Json } from './policy.ts';

type SecretKeyRefKeys = 'name' | 'group' | 'kind' | 'key';
type SecretObjectRefKeys = 'name' | 'group' | 'kind';
type BackendRefKeys = 'name' | 'group' | 'kind' | 'namespace' | 'port';

/** `true` when A and B are the same union of keys. */
type SameKeys<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

type RefKind<V> =
  V extends object
    ? SameKeys<keyof V, SecretKeyRefKeys> extends true ? 'secretKey'
      : SameKeys<keyof V, SecretObjectRefKeys> extends true ? 'secretObject'
        : SameKeys<keyof V, BackendRefKeys> extends true ? 'backend'
          : 'none'
    : 'none';

type LoweredKey<K, V, D extends string> =
  K extends string
    ? K extends D ? `${K}Ms`
      : K extends `${infer Base}Ref` ? (RefKind<NonNullable<V>> extends 'secretKey' | 'secretObject' ? Base : K extends 'backendRef' ? (RefKind<NonNullable<V>> extends 'backend' ? 'backendKey' : K) : K)
        : K
    : K;

type LoweredValue<K, V, D extends string> =
  K extends D ? number
    : K extends `${string}Ref`
      ? RefKind<NonNullable<V>> extends 'secretKey' ? string
        : RefKind<NonNullable<V>> extends 'secretObject' ? Readonly<Record<string, string>>
          : RefKind<NonNullable<V>> extends 'backend' ? string
            : Lowered<V, D>
      : Lowered<V, D>;

/** A ByteSize: `string | number` in the API types (no other API scalar is both). */
type IsByteSize<T> = string extends T ? (number extends T ? true : false) : false;

/** `T` as the translator's `lower()` leaves it; `D` names its Duration fields (at any depth). */
export type Lowered<T, D extends string = never> =
  unknown extends T ? Json
    : IsByteSize<T> extends true ? number
      : LoweredEach<T, D>;

type LoweredEach<T, D extends string> =
  T extends string | number | boolean | null | undefined ? T
    : T extends readonly (infer I)[] ? readonly Lowered<I, D>[]
      : T extends object ? { readonly [K in keyof T as LoweredKey<K, T[K], D>]: LoweredValue<K, T[K], D> }
        : T;

/** Flattens an intersection for readable hovers and error messages (no change in meaning). */
export type Simplify<T> = { [K in keyof T]: T[K] } & {};
