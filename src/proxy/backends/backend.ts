import type { Dispatcher } from 'undici';
import type { Backend } from '../../ir/types.ts';
import { RoundRobin } from './picker.ts';
import type { UpstreamPools, UpstreamProtocol } from './pools.ts';

export interface UpstreamTarget {
  readonly dispatcher: Dispatcher;
  readonly host: string;
  readonly port: number;
  /** `host[:port]` for a rewritten Host header (port left out when 80). */
  readonly authority: string;
}

export interface CompiledBackend {
  readonly key: string;
  readonly rewriteHost: boolean;
  readonly protocol: UpstreamProtocol;
  readonly endpoints: RoundRobin<UpstreamTarget>;
}

const H2C_APP_PROTOCOLS = new Set(['kubernetes.io/h2c', 'grpc', 'h2c']);

export function compileBackend(b: Backend, pools: UpstreamPools): CompiledBackend {
  const protocol: UpstreamProtocol = b.appProtocol !== undefined && H2C_APP_PROTOCOLS.has(b.appProtocol.toLowerCase()) ? 'h2c' : 'http1';
  const targets = b.endpoints.map((ep): UpstreamTarget => {
    const host = ep.host.includes(':') ? `[${ep.host}]` : ep.host;
    return { dispatcher: pools.acquire(ep, protocol), host: ep.host, port: ep.port, authority: ep.port === 80 ? host : `${host}:${ep.port}` };
  });
  return { key: b.key, rewriteHost: b.rewriteHost, protocol, endpoints: new RoundRobin(targets) };
}
