/** References and small Kubernetes / Gateway API shapes shared by several kinds. */
import type { TProperties } from 'typebox';
import { Int, JsonObject, List, MapOf, Obj, OneOf, Opt, Str } from './schema/build.ts';
import { exactlyOne } from './schema/rules.ts';
import { HTTPHeaderName, HttpUrl, Port, SectionName } from './scalars.ts';

const GROUP = (description = 'API group; empty means the core group') => Str(0, 253, { description, pattern: '^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$' });
const KIND = (o: { description?: string; default?: string } = {}) => Str(1, 63, { pattern: '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$', ...o });
const NAME = () => Str(1, 253, { description: 'name of the object, in the referring object\'s namespace' });

/** A Secret key in the policy's namespace; `defaultKey` is the key read when `key` is unset. */
export function LocalSecretKeyRef(defaultKey?: string, description?: string) {
  return Obj({
    name: NAME(),
    group: Opt(GROUP()),
    kind: Opt(Str(0, 63, { description: 'empty means Secret' })),
    key: Opt(Str(1, 253, { default: defaultKey, description: defaultKey ? `key in the Secret (default ${defaultKey})` : 'key in the Secret' })),
  }, { description });
}

export const LocalSecretObjectRef = (description?: string) =>
  Obj({ name: NAME(), group: Opt(GROUP()), kind: Opt(Str(0, 63, { description: 'empty means Secret' })) }, { description });

/** A same-namespace Service (default) or InferencePool. */
export const LocalBackendObjectReference = (description?: string) =>
  Obj({
    group: Opt(GROUP()),
    kind: Opt(KIND({ default: 'Service' })),
    name: NAME(),
    port: Opt(Port({ description: 'required when the target is a Service' })),
  }, {
    description,
    rules: [{
      path: '.port',
      message: 'port is required when the target is a Service',
      cel: "has(self.port) || (has(self.kind) && self.kind != 'Service')",
      check: (s) => s.port !== undefined || (s.kind !== undefined && s.kind !== 'Service'),
    }],
  });

/** Gateway API BackendObjectReference: a Service, ProxyBackend or other backend, possibly in another namespace. */
export const BackendObjectReference = (description?: string) =>
  Obj({
    group: Opt(GROUP()),
    kind: Opt(KIND({ default: 'Service' })),
    name: NAME(),
    namespace: Opt(Str(1, 63)),
    port: Opt(Port()),
  }, { description });

/** The one-of endpoint shape of external services: a backend reference or an opaque URL. */
export const endpointProperties = {
  backendRef: Opt(BackendObjectReference('the Service or ProxyBackend serving the endpoint')),
  url: Opt(HttpUrl({ description: 'opaque http(s) URL; https enables TLS; no Service policies or load balancing apply' })),
} as const;
export const ENDPOINT_MEMBERS = ['backendRef', 'url'] as const;
export const endpointRule = () => exactlyOne(ENDPOINT_MEMBERS);

/** An object that is one of backendRef/url plus `extra` members. */
export function PolicyBackendEndpoint<P extends TProperties>(extra: P, description?: string, rules = [endpointRule()]) {
  return Obj({ ...endpointProperties, ...extra }, { description, rules });
}

export const LabelSelector = (description?: string) =>
  Obj({
    matchLabels: Opt(MapOf(Str(0, 63))),
    matchExpressions: Opt(List(Obj({
      key: Str(1, 317),
      operator: OneOf(['In', 'NotIn', 'Exists', 'DoesNotExist'] as const),
      values: Opt(List(Str(0, 63))),
    }))),
  }, { description });

export const HTTPHeaderMatch = () =>
  Obj({
    type: Opt(OneOf(['Exact', 'RegularExpression'] as const, { default: 'Exact' })),
    name: HTTPHeaderName(),
    value: Str(1, 4096),
  });

/** Gateway API HTTPHeaderFilter. */
export const HTTPHeaderFilter = (description?: string) => {
  const header = Obj({ name: HTTPHeaderName(), value: Str(1, 4096) });
  return Obj({
    set: Opt(List(header, { max: 16 })),
    add: Opt(List(header, { max: 16 })),
    remove: Opt(List(HTTPHeaderName(), { max: 16 })),
  }, { description });
};

/** Gateway API ParentReference. */
export const ParentReference = () =>
  Obj({
    group: Opt(GROUP()),
    kind: Opt(KIND({ default: 'Gateway' })),
    namespace: Opt(Str(1, 63)),
    name: NAME(),
    sectionName: Opt(SectionName()),
    port: Opt(Port()),
  });

export const Condition = () =>
  Obj({
    type: Str(1, 316),
    status: OneOf(['True', 'False', 'Unknown'] as const),
    reason: Str(1, 1024),
    message: Str(0, 32768),
    observedGeneration: Opt(Int(0)),
    lastTransitionTime: Opt(Str(1, 64, { description: 'RFC 3339 timestamp' })),
  });

export const Conditions = (max: number, min?: number) => List(Condition(), { min, max });

/** Kubernetes core EnvVar (value or valueFrom). */
export const EnvVar = () => Obj({ name: Str(1, 256), value: Opt(Str(0, 32768)), valueFrom: Opt(JsonObject('a Kubernetes EnvVarSource')) });

