/** Frontend telemetry: access logs, tracing and metric labels. */
import { List, Obj, OneOf, Opt } from '../schema/build.ts';
import { CELExpression, LongString, ShortString, TinyString } from '../scalars.ts';
import { endpointProperties, endpointRule } from '../refs.ts';

export const NamedExpression = () => Obj({ name: ShortString(), expression: CELExpression() });

const LogAttributes = () =>
  Obj({
    remove: Opt(List(TinyString(), { max: 32, description: 'default fields to drop' })),
    add: Opt(List(NamedExpression(), { description: 'failing expressions drop the pair' })),
  });

export const AccessLog = () =>
  Obj({
    filter: Opt(CELExpression({ description: 'log only when true' })),
    attributes: Opt(LogAttributes()),
    otlp: Opt(Obj({
      ...endpointProperties,
      filter: Opt(CELExpression({ description: "default the parent's filter" })),
      attributes: Opt(LogAttributes()),
      protocol: Opt(OneOf(['HTTP', 'GRPC'] as const, { default: 'GRPC' })),
      path: Opt(LongString({ default: '/v1/logs', description: 'HTTP only' })),
    }, { description: 'export logs over OTLP', rules: [endpointRule()] })),
  });

export const Tracing = () =>
  Obj({
    ...endpointProperties,
    protocol: Opt(OneOf(['HTTP', 'GRPC'] as const, { default: 'HTTP' })),
    attributes: Opt(List(NamedExpression())),
    resources: Opt(List(NamedExpression())),
    randomSampling: Opt(CELExpression({ description: 'float 0.0-1.0 or boolean; starts a trace when the request has none; disabled when unset' })),
    clientSampling: Opt(CELExpression({ description: 'applies when the request carries a trace; 100% when unset' })),
  }, { description: 'OTLP tracing', rules: [endpointRule()] });

export const Metrics = () =>
  Obj({
    attributes: Obj({ add: List(NamedExpression(), { min: 1, max: 16, description: 'CEL labels on all metrics; failures yield "unknown"' }) }),
  });
