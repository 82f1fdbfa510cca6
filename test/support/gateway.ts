/**
 * The e2e harness: YAML in, a listening gateway out. It runs the real pipeline in-process —
 * parse → translate → ProxyRuntime.apply — with every listener on 127.0.0.1 and an ephemeral
 * port, and lets tests address listeners by the port their Gateway declares (80, 443, 8080 …).
 *
 * Upstream addresses are substituted into the YAML: `{{echo-a.port}}` and `{{echo-a.host}}` for
 * an upstream passed as `{ upstreams: { 'echo-a': server } }`.
 */
import { Registry } from 'prom-client';
import { parseAllDocuments } from 'yaml';
import { translate } from '../../src/controller/translate/index.ts';
import { ProxyRuntime } from '../../src/proxy/runtime.ts';
import { silentLogger, type Logger } from '../../src/common/logger.ts';
import type { KubeObject, ObjectStatus, Condition } from '../../src/api/gateway/object.ts';
import type { ProxyConfig } from '../../src/ir/types.ts';
import { sendHttp2Request, sendRequest, type RequestOptions, type TestResponse } from './client.ts';
import type { Upstream } from './manifests.ts';

export interface GatewayOptions {
  upstreams?: Readonly<Record<string, Upstream>>;
  controllerName?: string;
  /** The experimental ProxyModel API (run --enable-proxy-models). */
  proxyModels?: boolean;
  /** Where the runtime logs (access log lines included); silent when absent. */
  logger?: Logger;
}

export interface GatewayHarness {
  readonly config: ProxyConfig;
  /** What `ProxyRuntime.apply` reported; tests of valid config expect it empty. */
  readonly applyErrors: readonly unknown[];
  /** The real port behind a Gateway listener port; throws if the runtime does not serve it. */
  portOf(gatewayPort: number): number;
  url(gatewayPort: number, path?: string, scheme?: 'http' | 'https'): string;
  /** An HTTP/1.1 request to the listener that the Gateway declares on `gatewayPort`. */
  request(gatewayPort: number, opts?: RequestOptions): Promise<TestResponse>;
  /** An HTTP/2 request (h2 over TLS when `opts.tls`, otherwise h2c with prior knowledge). */
  request2(gatewayPort: number, opts?: RequestOptions): Promise<TestResponse>;
  statuses(): readonly ObjectStatus[];
  /** The status the translator computed for one object; throws if there is none. */
  statusOf(kind: string, name: string, namespace?: string): Record<string, unknown>;
  close(): Promise<void>;
}

export async function startGateway(yamlText: string, options: GatewayOptions = {}): Promise<GatewayHarness> {
  const objects = parseObjects(substitute(yamlText, options.upstreams ?? {}));
  const { config, statuses } = translate(objects, { ...(options.controllerName ? { controllerName: options.controllerName } : {}), ...(options.proxyModels ? { proxyModels: true } : {}) });
  const runtime = new ProxyRuntime({
    logger: options.logger ?? silentLogger,
    registry: new Registry(),
    bindAddress: '127.0.0.1',
    listenPort: () => 0,
  });
  let applied: { errors: readonly unknown[] };
  try {
    applied = await runtime.apply(config);
    if (!runtime.ready()) throw new Error(`the runtime is not ready after apply: ${applied.errors.join('; ')}`);
  } catch (err) {
    await runtime.close({ graceMs: 0 });
    throw err;
  }

  const portOf = (gatewayPort: number): number => {
    const port = runtime.portOf(gatewayPort);
    if (port === undefined) throw new Error(`the runtime serves no listener for Gateway port ${gatewayPort}`);
    return port;
  };
  return {
    config,
    applyErrors: applied.errors,
    portOf,
    url: (gatewayPort, path = '/', scheme = 'http') => `${scheme}://127.0.0.1:${portOf(gatewayPort)}${path}`,
    request: (gatewayPort, opts) => sendRequest(portOf(gatewayPort), opts),
    request2: (gatewayPort, opts) => sendHttp2Request(portOf(gatewayPort), opts),
    statuses: () => statuses,
    statusOf(kind, name, namespace = 'default') {
      const found = statuses.find((s) => s.kind === kind && s.metadata.name === name && (s.metadata.namespace ?? 'default') === namespace);
      if (!found) throw new Error(`no status for ${kind} ${namespace}/${name}; have ${statuses.map((s) => `${s.kind} ${s.metadata.namespace}/${s.metadata.name}`).join(', ')}`);
      return found.status;
    },
    close: () => runtime.close({ graceMs: 0 }),
  };
}

/** The condition of `type` in a conditions array, or undefined. */
export function conditionOf(conditions: unknown, type: string): Condition | undefined {
  if (!Array.isArray(conditions)) return undefined;
  return (conditions as Condition[]).find((c) => c.type === type);
}

/** The conditions an HTTPRoute's status reports for its first (or only) parent. */
export function routeParentConditions(routeStatus: Record<string, unknown>): Condition[] {
  const parents = routeStatus.parents;
  if (!Array.isArray(parents) || parents.length === 0) throw new Error(`route status has no parents: ${JSON.stringify(routeStatus)}`);
  return (parents[0] as { conditions?: Condition[] }).conditions ?? [];
}

function substitute(text: string, upstreams: Readonly<Record<string, Upstream>>): string {
  return text.replace(/\{\{\s*([\w-]+)\.(host|port)\s*\}\}/g, (_m, name: string, field: 'host' | 'port') => {
    const upstream = upstreams[name];
    if (!upstream) throw new Error(`the YAML refers to upstream "${name}" but none was passed`);
    return String(upstream[field]);
  });
}

function parseObjects(text: string): KubeObject[] {
  const objects: KubeObject[] = [];
  for (const document of parseAllDocuments(text)) {
    if (document.errors.length > 0) throw new Error(`test YAML does not parse: ${document.errors[0].message}`);
    const value: unknown = document.toJS();
    if (value !== null && value !== undefined) objects.push(value as KubeObject);
  }
  return objects;
}
