/**
 * The part of the Metadata Reflection API (`Reflect.defineMetadata`, `getOwnMetadata`, `getMetadata`)
 * that @peculiar/x509 needs: it registers its algorithm providers with tsyringe, which refuses to
 * load without `Reflect.getMetadata` and stores `@inject` tokens through these three calls. The
 * library's build emits no `design:*` metadata, so nothing else is read.
 *
 * Stop-gap for the `reflect-metadata` package, which x509's README names: once it is a
 * devDependency, `certs.ts` imports it instead and this file goes. Imported only by test code, and
 * installs nothing when a real polyfill is already present.
 */
type MetadataKey = unknown;
type PropertyKey = string | symbol | undefined;

interface MetadataReflect {
  defineMetadata(key: MetadataKey, value: unknown, target: object, property?: PropertyKey): void;
  getOwnMetadata(key: MetadataKey, target: object, property?: PropertyKey): unknown;
  getMetadata(key: MetadataKey, target: object, property?: PropertyKey): unknown;
}

const reflect = Reflect as typeof Reflect & Partial<MetadataReflect>;

if (typeof reflect.getMetadata !== 'function') {
  const store = new WeakMap<object, Map<PropertyKey, Map<MetadataKey, unknown>>>();
  const ownMap = (target: object, property: PropertyKey, create: boolean): Map<MetadataKey, unknown> | undefined => {
    let byProperty = store.get(target);
    if (!byProperty) {
      if (!create) return undefined;
      byProperty = new Map();
      store.set(target, byProperty);
    }
    let metadata = byProperty.get(property);
    if (!metadata && create) {
      metadata = new Map();
      byProperty.set(property, metadata);
    }
    return metadata;
  };
  const api: MetadataReflect = {
    defineMetadata(key, value, target, property) {
      ownMap(target, property, true)?.set(key, value);
    },
    getOwnMetadata(key, target, property) {
      return ownMap(target, property, false)?.get(key);
    },
    getMetadata(key, target, property) {
      // Metadata is inherited along the prototype chain, as in reflect-metadata.
      for (let at: object | null = target; at !== null; at = Object.getPrototypeOf(at) as object | null) {
        const metadata = ownMap(at, property, false);
        if (metadata?.has(key)) return metadata.get(key);
      }
      return undefined;
    },
  };
  Object.assign(reflect, api);
}
