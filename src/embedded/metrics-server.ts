import http from 'node:http';
import type { Logger } from '../common/logger.ts';

export interface MetricsView {
  metrics(): Promise<string>;
  readonly metricsContentType: string;
}

/** `GET /metrics` in the Prometheus text format: control plane, process and proxy metrics together. */
export function createMetricsServer(view: MetricsView, logger: Logger): http.Server {
  return http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/metrics') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('metrics are served at /metrics\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { allow: 'GET, HEAD' }).end();
    view.metrics().then(
      (text) => res.writeHead(200, { 'content-type': view.metricsContentType }).end(text),
      (err: unknown) => {
        logger.error({ err }, 'collecting metrics failed');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('collecting metrics failed\n');
      },
    );
  });
}
