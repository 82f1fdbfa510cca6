import http from 'node:http';
import type { ObjectStatus } from '../api/gateway/object.ts';
import type { ProxyConfig } from '../ir/types.ts';
import { redactAt } from './redact.ts';

/** What the admin endpoints show; the embedded gateway provides it. */
export interface AdminView {
  config(): ProxyConfig | undefined;
  /** Async when the statuses live in another thread (embedded mode's config thread). */
  statuses(): readonly ObjectStatus[] | Promise<readonly ObjectStatus[]>;
  isReady(): boolean;
  /**
   * Where the config holds data read from Secrets or derived from them (JSON Pointers, from the
   * translator's provenance ledger): /config_dump shows each as "[redacted]".
   */
  secretPaths(): readonly string[];
  /** AI providers' health per backend (`/providers`); absent when the proxies run in other processes. */
  providerHealth?(): unknown;
}

/** The config as JSON with every location that holds Secret data replaced by "[redacted]". */
export function redactedJson(value: unknown, secretPaths: readonly string[]): string {
  return JSON.stringify(redactAt(value, secretPaths), null, 2);
}

/**
 * The admin server (loopback by default: it shows the whole config; values that came from
 * Secrets are redacted): `/config_dump`, `/status`, `/providers` (AI provider health), `/healthz/ready`.
 */
export function createAdminServer(view: AdminView): http.Server {
  return http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { error: 'only GET is supported' }, { allow: 'GET, HEAD' });
    switch (path) {
      case '/config_dump': {
        const config = view.config();
        if (!config) return send(res, 503, { error: 'no config has been applied yet' });
        return sendRaw(res, 200, redactedJson(config, view.secretPaths()));
      }
      case '/status': {
        const items = (statuses: readonly ObjectStatus[]): unknown[] => statuses.map(({ apiVersion, kind, metadata, status }) => ({ apiVersion, kind, metadata: { name: metadata.name, namespace: metadata.namespace }, status }));
        const statuses = view.statuses();
        if (!(statuses instanceof Promise)) return send(res, 200, { items: items(statuses) });
        statuses.then((s) => send(res, 200, { items: items(s) }), (err: unknown) => send(res, 503, { error: `statuses unavailable: ${(err as Error).message}` }));
        return;
      }
      case '/providers':
        if (!view.providerHealth) return send(res, 404, { error: 'provider health is shown only with --workers 1 (the proxies run in other processes); see the switchboard_llm_provider_* metrics' });
        return send(res, 200, { backends: view.providerHealth() });
      case '/healthz/ready':
        return view.isReady() ? sendText(res, 200, 'ready\n') : sendText(res, 503, 'not ready\n');
      default:
        return send(res, 404, { error: `no admin endpoint at ${path}`, endpoints: ['/config_dump', '/status', '/providers', '/healthz/ready'] });
    }
  });
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendRaw(res, status, JSON.stringify(body, null, 2), headers);
}

function sendRaw(res: http.ServerResponse, status: number, json: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }).end(`${json}\n`);
}

function sendText(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end(body);
}
