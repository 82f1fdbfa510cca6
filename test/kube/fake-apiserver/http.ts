/** HTTP plumbing of the fake API server: errors as Kubernetes Status objects, bodies, JSON answers. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import type { JsonObject } from './managed-fields.ts';
import type { ResourcePath } from './resources.ts';

export const APPLY_PATCH = 'application/apply-patch+yaml';

export class HttpError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: JsonObject | undefined;
  constructor(code: number, reason: string, message: string, details?: JsonObject) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.details = details;
  }
}

export function notFound(path: ResourcePath): HttpError {
  const group = path.type.group;
  return new HttpError(404, 'NotFound', `${path.type.plural}${group ? `.${group}` : ''} "${path.name ?? ''}" not found`, { name: path.name ?? '', kind: path.type.plural });
}

export function asObject(body: unknown): JsonObject {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'BadRequest', 'the request body must be an object');
  return body as JsonObject;
}

export function isTrue(value: string | null): boolean {
  return value === 'true' || value === '1';
}

export function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function parseBody(raw: string, contentType: string | undefined): unknown {
  try {
    return contentType === APPLY_PATCH ? parseYaml(raw) : JSON.parse(raw);
  } catch (err) {
    throw new HttpError(400, 'BadRequest', `cannot parse the request body: ${(err as Error).message}`);
  }
}

export function sendJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendStatus(res: ServerResponse, err: HttpError): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  sendJson(res, err.code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: err.message, reason: err.reason, code: err.code, ...(err.details ? { details: err.details } : {}) });
}
