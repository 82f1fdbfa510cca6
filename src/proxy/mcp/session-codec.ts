import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Logger } from '../../common/logger.ts';

/**
 * The Stateful session id is self-contained: the state below, encrypted and authenticated with
 * AES-256-GCM under the gateway's session key, so any replica holding the key can resume a
 * session and nobody else can read or forge one. The backend key is the additional
 * authenticated data: a session of one MCP backend is not accepted by another.
 *
 *   id = "sb1." base64url( iv(12) | tag(16) | ciphertext )
 */

export interface UpstreamSession {
  /** The target's `mcp-session-id` (Streamable HTTP); absent when the target issued none. */
  readonly sid?: string;
  /** Protocol version negotiated with this target. */
  readonly pv: string;
  /**
   * The endpoint (`host:port`, IPv6 bracketed) of a Service target that holds the upstream
   * session; every later request of the session goes there. Absent when the target was reached
   * by its host name (no endpoints in the config, or an id issued before endpoints were pinned).
   */
  readonly ep?: string;
}

export interface SessionState {
  /** Protocol version agreed with the client. */
  readonly pv: string;
  /** Upstream sessions of the targets that joined this session (FailOpen may leave some out). */
  readonly targets: Readonly<Record<string, UpstreamSession>>;
  /** The client's `initialize` params, replayed when an upstream session must be re-established. */
  readonly client: Readonly<Record<string, unknown>>;
  /** Issued at (epoch seconds). */
  readonly iat: number;
}

const VERSION_PREFIX = 'sb1.';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const SESSION_KEY_BYTES = 32;
/** Ids beyond this are rejected before any crypto work. */
const MAX_ID_LENGTH = 16 * 1024;

export function encodeSession(state: SessionState, key: Buffer, backendKey: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(backendKey, 'utf8'));
  const body = Buffer.concat([cipher.update(JSON.stringify(state), 'utf8'), cipher.final()]);
  return VERSION_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The state, or undefined for an id that is malformed, tampered with, or sealed with another key or backend. */
export function decodeSession(id: string, key: Buffer, backendKey: string): SessionState | undefined {
  if (!id.startsWith(VERSION_PREFIX) || id.length > MAX_ID_LENGTH) return undefined;
  const raw = Buffer.from(id.slice(VERSION_PREFIX.length), 'base64url');
  if (raw.length <= IV_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(backendKey, 'utf8'));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const text = Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    return asState(JSON.parse(text));
  } catch {
    return undefined;
  }
}

function asState(value: unknown): SessionState | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const s = value as Record<string, unknown>;
  if (typeof s.pv !== 'string' || typeof s.iat !== 'number' || typeof s.targets !== 'object' || s.targets === null) return undefined;
  if (typeof s.client !== 'object' || s.client === null) return undefined;
  for (const upstream of Object.values(s.targets as Record<string, unknown>)) {
    if (typeof upstream !== 'object' || upstream === null) return undefined;
    const ep = (upstream as Record<string, unknown>).ep;
    if (ep !== undefined && typeof ep !== 'string') return undefined;
  }
  return s as unknown as SessionState;
}

/**
 * The key: `explicit` when given, else env `SESSION_KEY` (64 hex characters), else a random
 * per-process key — sessions then survive neither a restart nor a hop to another replica, which
 * is logged once. A malformed SESSION_KEY is a configuration error and throws.
 */
export function resolveSessionKey(explicit: Buffer | undefined, env: NodeJS.ProcessEnv, logger: Logger): Buffer {
  return configuredSessionKey(explicit, env) ?? randomSessionKey(logger);
}

/** `explicit`, else env `SESSION_KEY`; undefined when neither is set. Throws on a malformed one. */
export function configuredSessionKey(explicit: Buffer | undefined, env: NodeJS.ProcessEnv): Buffer | undefined {
  if (explicit !== undefined) {
    if (explicit.length !== SESSION_KEY_BYTES) throw new Error(`MCP session key must be ${SESSION_KEY_BYTES} bytes, got ${explicit.length}`);
    return explicit;
  }
  const hex = env.SESSION_KEY;
  if (hex !== undefined && hex !== '') {
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error('SESSION_KEY must be 64 hexadecimal characters (32 bytes)');
    return Buffer.from(hex, 'hex');
  }
  return undefined;
}

/** A random per-process key, with the warning that sessions keyed with it stay in this process. */
export function randomSessionKey(logger: Logger): Buffer {
  logger.warn('SESSION_KEY is not set and the gateway has no session key Secret: MCP sessions use a random per-process key and cannot be resumed by another replica or after a restart');
  return randomBytes(SESSION_KEY_BYTES);
}
