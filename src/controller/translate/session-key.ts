import { createHash } from 'node:crypto';
import type { KubeObject } from '../../api/gateway/object.ts';
import type { Snapshot } from './snapshot.ts';

/**
 * The per-Gateway MCP session key (issue 15, docs/kubernetes.md "Session keys"): a Secret
 * `<gateway>-session-key` in the Gateway's namespace whose entry `key` holds 64 hexadecimal
 * characters (32 bytes). The controller creates it (src/controller/kube/session-keys.ts); the
 * translator reads it, through the Secret ledger, into each listener of the Gateway
 * (`Listener.sessionKey`), so it is redacted in /config_dump, scrubbed from proxy logs, and sent
 * only to the proxies of that Gateway (src/distribute/remote/split.ts cuts binds by listener).
 */
export const SESSION_KEY_ENTRY = 'key';
export const SESSION_KEY_SUFFIX = '-session-key';
/** The API server's bound on a Secret's name (a DNS subdomain). */
const MAX_NAME = 253;
const HEX_KEY = /^[0-9a-f]{64}$/;

/** `<gateway>-session-key`; a Gateway name too long for that keeps a prefix and a hash of the whole name. */
export function sessionKeySecretName(gateway: string): string {
  const plain = `${gateway}${SESSION_KEY_SUFFIX}`;
  if (plain.length <= MAX_NAME) return plain;
  const digest = createHash('sha256').update(gateway).digest('hex').slice(0, 16);
  const prefix = gateway.slice(0, MAX_NAME - SESSION_KEY_SUFFIX.length - digest.length - 1).replace(/[.-]+$/, '');
  return `${prefix}-${digest}${SESSION_KEY_SUFFIX}`;
}

/** Whether a Secret's `key` entry is a usable session key (64 lowercase or uppercase hex characters). */
export function isSessionKey(value: string | undefined): value is string {
  return value !== undefined && HEX_KEY.test(value.toLowerCase());
}

/** The Gateway's session key as 64 lowercase hex characters, or undefined (no Secret, or not a valid key). */
export function gatewaySessionKey(gateway: { readonly namespace: string; readonly name: string }, snapshot: Snapshot): string | undefined {
  const secret: KubeObject | undefined = snapshot.secrets.get(`${gateway.namespace}/${sessionKeySecretName(gateway.name)}`);
  if (!secret) return undefined;
  const value = snapshot.secretLedger.entries(secret)[SESSION_KEY_ENTRY]?.trim();
  return isSessionKey(value) ? snapshot.secretLedger.record(value.toLowerCase()) : undefined;
}
