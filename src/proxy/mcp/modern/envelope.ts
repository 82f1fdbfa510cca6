/**
 * The stateless MCP revision 2026-07-28: no initialize and no session; every request carries a
 * `_meta` envelope (protocol version, client info, client capabilities), mirrored in the
 * `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers so intermediaries can route it
 * without reading the body. Classification is body-primary: the envelope decides the era, the
 * headers are cross-checked (error codes as the official SDK 2.x and the conformance suite use).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { ErrorCode, type JsonRpcMessage, type Params } from '../jsonrpc.ts';

export const MODERN_PROTOCOL = '2026-07-28';
export const SUPPORTED_MODERN_PROTOCOLS: readonly string[] = [MODERN_PROTOCOL];

export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

export const ModernErrorCode = {
  /** A header disagrees with the body, or a required header is missing (HTTP 400). */
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  /** data: `{ supported, requested }` (HTTP 400). */
  UnsupportedProtocolVersion: -32022,
} as const;

/** Methods whose `Mcp-Name` header mirrors a body field. */
const NAME_SOURCE: Readonly<Record<string, string>> = {
  'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri',
  'tasks/get': 'taskId', 'tasks/update': 'taskId', 'tasks/cancel': 'taskId',
};

const BASE64_PREFIX = '=?base64?';
const BASE64_SUFFIX = '?=';

export interface Envelope {
  readonly protocolVersion: string;
  readonly clientInfo: Params;
  readonly clientCapabilities: Params;
}

export type Classification =
  | { readonly era: 'legacy' }
  | { readonly era: 'modern'; readonly envelope: Envelope }
  | { readonly era: 'rejected'; readonly status: number; readonly code: number; readonly message: string; readonly data?: unknown };

function isModernVersion(version: string): boolean {
  return version >= MODERN_PROTOCOL || version.startsWith('DRAFT-2026');
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

function isRecord(value: unknown): value is Params {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Decodes the `=?base64?…?=` sentinel the SDK uses for values that are not plain ASCII field values. */
export function decodeHeaderValue(value: string): string {
  if (!value.startsWith(BASE64_PREFIX) || !value.endsWith(BASE64_SUFFIX)) return value;
  return Buffer.from(value.slice(BASE64_PREFIX.length, -BASE64_SUFFIX.length), 'base64').toString('utf8');
}

function rejected(code: number, message: string, data?: unknown): Classification {
  return data === undefined ? { era: 'rejected', status: 400, code, message } : { era: 'rejected', status: 400, code, message, data };
}

/** The era of one POSTed message, with the header cross-checks of the modern era. */
export function classify(message: JsonRpcMessage, headers: IncomingHttpHeaders): Classification {
  const headerVersion = header(headers, 'mcp-protocol-version');
  const method = 'method' in message ? message.method : undefined;
  const params = 'method' in message ? message.params : undefined;
  const meta = isRecord(params?._meta) ? params._meta : undefined;
  const claimed = meta?.[META.protocolVersion];
  if (claimed === undefined) {
    if (headerVersion !== undefined && isModernVersion(headerVersion) && 'id' in message) {
      return rejected(ErrorCode.InvalidParams, `Missing _meta envelope key ${META.protocolVersion} for protocol version ${headerVersion}`);
    }
    return { era: 'legacy' };
  }
  if (typeof claimed !== 'string') return rejected(ErrorCode.InvalidParams, `_meta ${META.protocolVersion} must be a string`);
  if (!SUPPORTED_MODERN_PROTOCOLS.includes(claimed)) {
    return rejected(ModernErrorCode.UnsupportedProtocolVersion, `Unsupported protocol version: ${claimed}`, { supported: SUPPORTED_MODERN_PROTOCOLS, requested: claimed });
  }
  const isRequest = 'id' in message && message.id !== undefined;
  if (headerVersion !== undefined && headerVersion !== claimed) {
    return rejected(ModernErrorCode.HeaderMismatch, `MCP-Protocol-Version header (${headerVersion}) does not match _meta (${claimed})`);
  }
  const headerMethod = header(headers, 'mcp-method');
  if (headerMethod !== undefined && headerMethod !== method) {
    return rejected(ModernErrorCode.HeaderMismatch, `Mcp-Method header (${headerMethod}) does not match the body method (${method})`);
  }
  // Notifications are exempt from the presence checks; requests must carry the standard headers.
  if (isRequest) {
    if (headerVersion === undefined) return rejected(ModernErrorCode.HeaderMismatch, 'Missing MCP-Protocol-Version header');
    if (headerMethod === undefined) return rejected(ModernErrorCode.HeaderMismatch, 'Missing Mcp-Method header');
    const field = method !== undefined && Object.hasOwn(NAME_SOURCE, method) ? NAME_SOURCE[method] : undefined;
    const expected = field === undefined ? undefined : params?.[field];
    if (typeof expected === 'string') {
      const name = header(headers, 'mcp-name');
      if (name === undefined) return rejected(ModernErrorCode.HeaderMismatch, 'Missing Mcp-Name header');
      if (decodeHeaderValue(name) !== expected) return rejected(ModernErrorCode.HeaderMismatch, `Mcp-Name header does not match params.${field}`);
    }
  }
  const clientInfo = meta?.[META.clientInfo];
  const clientCapabilities = meta?.[META.clientCapabilities];
  return {
    era: 'modern',
    envelope: { protocolVersion: claimed, clientInfo: isRecord(clientInfo) ? clientInfo : {}, clientCapabilities: isRecord(clientCapabilities) ? clientCapabilities : {} },
  };
}

/** The initialize params the gateway sends to 2025-era targets on a modern client's behalf. */
export function legacyInitializeParams(envelope: Envelope, protocolVersion: string): Params {
  const clientInfo = typeof envelope.clientInfo.name === 'string' ? envelope.clientInfo : { name: 'switchboard', version: '0' };
  return { protocolVersion, capabilities: envelope.clientCapabilities, clientInfo };
}
