import type { UpstreamKind } from '../policies/backend/support.ts';
import type { BackendPolicy } from '../../ir/policy.ts';
import type { Backend } from '../../ir/types.ts';
import { compileClientFormat, type ClientFormatOf } from './client-format.ts';
import type { BackendHandler, BackendHandlers } from './handlers.ts';
import { RoundRobin } from '../routing/picker.ts';
import type { UpstreamEndpoints, UpstreamPools, UpstreamProtocol, UpstreamTarget } from '../policies/backend/pools.ts';

export type { UpstreamTarget };

/** A backend compiled once per config: its endpoints (key, protocol, round robin of targets) and how it is served. */
export interface CompiledBackend extends UpstreamEndpoints {
  readonly rewriteHost: boolean;
  /** Set for backends served in-process (MCP, LLM …): requests go to it instead of an endpoint. */
  readonly handler?: BackendHandler;
  /** Which backend-policy members its upstream calls apply (policies/backend/support.ts). */
  readonly kind: UpstreamKind;
  /** A2A backends: the paths whose answers are agent cards, rewritten to name the gateway (src/proxy/a2a). */
  readonly a2aCardPaths?: ReadonlySet<string>;
  /** The format its clients read gateway errors in, under a rule's effective backend policy (client-format.ts). */
  clientFormat(policy: BackendPolicy | undefined): ClientFormatOf;
}

const H2C_APP_PROTOCOLS = new Set(['kubernetes.io/h2c', 'grpc', 'h2c']);

/** An endpoint undici cannot address (bad host or port) is reported and left out. */
export function compileBackend(b: Backend, pools: UpstreamPools, onError: (message: string) => void, handlers?: BackendHandlers): CompiledBackend {
  const protocol: UpstreamProtocol = b.appProtocol !== undefined && H2C_APP_PROTOCOLS.has(b.appProtocol.toLowerCase()) ? 'h2c' : 'http1';
  const targets: UpstreamTarget[] = [];
  for (const ep of b.endpoints) {
    const host = ep.host.includes(':') ? `[${ep.host}]` : ep.host;
    try {
      targets.push({ dispatcher: pools.acquire(ep, protocol), host: ep.host, port: ep.port, authority: ep.port === 80 ? host : `${host}:${ep.port}` });
    } catch (err) {
      onError(`backend ${b.key}: invalid endpoint ${host}:${ep.port}: ${(err as Error).message}`);
    }
  }
  const handler = handlers?.acquire(b);
  const clientFormat = b.ai || b.mcp || b.a2a ? (policy: BackendPolicy | undefined) => compileClientFormat(b, policy) : gatewayFormat;
  const kind: UpstreamKind = b.ai ? 'ai' : b.mcp ? 'mcp' : b.agentRuntime ? 'agentRuntime' : 'service';
  const a2a = b.a2a ? { a2aCardPaths: new Set(b.a2a.cardPaths) } : {};
  return { key: b.key, rewriteHost: b.rewriteHost, protocol, endpoints: new RoundRobin(targets), clientFormat, kind, ...(handler ? { handler } : {}), ...a2a };
}

function gatewayFormat(): ClientFormatOf {
  return 'gateway';
}
