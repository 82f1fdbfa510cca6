/**
 * One proxy's config stream as the controller sees it: what the proxy has acknowledged, the one
 * response it has not answered yet, and the version it last refused. The transport (server.ts)
 * feeds it requests and takes its responses; it holds no socket.
 */
import { create } from '@bufbuild/protobuf';
import { ConfigResponseSchema, type ConfigRequest, type ConfigResponse } from './gen/v1/config_pb.js';
import { diffSlice, type GatewayRef, type ProxySlice, type VersionMap, versionsOf } from './split.ts';
import { SystemVersionScheme } from './version.ts';
import { toWireRef, toWireResource } from './wire.ts';

/** What the distributor offers a session: the current slice for its gateways. */
export interface SliceSource {
  /** undefined until the controller has published a config. */
  slice(gateways: readonly GatewayRef[]): { readonly slice: ProxySlice; readonly redactions: readonly string[]; readonly controllerVersion: string } | undefined;
}

export interface SessionEvents {
  sent(session: ProxySession, resources: number): void;
  acked(session: ProxySession, version: string, controllerVersion: string): void;
  nacked(session: ProxySession, version: string, errors: readonly string[]): void;
  /** A request this session cannot take (a second subscribe, an unexpected nonce): logged. */
  ignored(session: ProxySession, why: string): void;
}

interface InFlight {
  readonly nonce: string;
  readonly version: string;
  readonly controllerVersion: string;
  readonly versions: VersionMap;
}

export class ProxySession {
  readonly proxyId: string;
  readonly namespace: string;
  readonly gateways: readonly GatewayRef[];
  readonly serviceAccount: string;
  readonly #source: SliceSource;
  readonly #events: SessionEvents;
  readonly #send: (response: ConfigResponse) => void;
  /** The scheme of this proxy's system versions (version.ts): SORTED for a proxy built before schemes. */
  readonly #scheme: SystemVersionScheme;
  #held: VersionMap;
  #inFlight: InFlight | undefined;
  #refusedVersion: string | undefined;
  #answeredOnce = false;
  #nonces = 0;
  /** What the proxy serves, as far as it has told us: the version it acknowledged last. */
  ackedVersion: string | undefined;
  lastError: readonly string[] | undefined;

  constructor(init: {
    proxyId: string; namespace: string; gateways: readonly GatewayRef[]; serviceAccount: string; held: VersionMap;
    source: SliceSource; events: SessionEvents; send: (response: ConfigResponse) => void;
    /** Default SORTED. */
    scheme?: SystemVersionScheme;
  }) {
    this.#scheme = init.scheme ?? SystemVersionScheme.SORTED;
    this.proxyId = init.proxyId;
    this.namespace = init.namespace;
    this.gateways = init.gateways;
    this.serviceAccount = init.serviceAccount;
    this.#held = init.held;
    this.#source = init.source;
    this.#events = init.events;
    this.#send = init.send;
  }

  /**
   * Sends what the proxy lacks of the current config, unless a response is still unanswered (its
   * answer brings us back here) or the proxy already refused this very version (it would refuse
   * it again; the next publish brings a new one). The first push after subscribing is sent even
   * when empty, so the proxy learns it is in step.
   */
  push(): void {
    if (this.#inFlight) return;
    const current = this.#source.slice(this.gateways);
    if (!current) return;
    const { slice, redactions, controllerVersion } = current;
    const version = slice.versionIn(this.#scheme);
    if (version === this.#refusedVersion) return;
    const delta = diffSlice(slice.resources, this.#held);
    if (delta.added.length === 0 && delta.removed.length === 0 && this.#answeredOnce) {
      // The config went back to exactly what the proxy serves (e.g. the change it refused was
      // reverted): nothing to send, but the refusal is over — say so, or the Gateway would keep
      // reporting it until an unrelated change reached this proxy.
      if (this.lastError !== undefined) this.#settle(version, controllerVersion);
      return;
    }
    const nonce = `${++this.#nonces}`;
    this.#inFlight = { nonce, version, controllerVersion, versions: versionsOf(slice.resources) };
    this.#answeredOnce = true;
    this.#send(create(ConfigResponseSchema, {
      systemVersion: version,
      systemVersionScheme: this.#scheme,
      nonce,
      controllerVersion,
      resources: delta.added.map(toWireResource),
      removedResources: delta.removed.map(toWireRef),
      logRedactions: [...redactions],
    }));
    this.#events.sent(this, delta.added.length + delta.removed.length);
  }

  /** The proxy serves `version` with nothing refused. */
  #settle(version: string, controllerVersion: string): void {
    this.#refusedVersion = undefined;
    this.ackedVersion = version;
    this.lastError = undefined;
    this.#events.acked(this, version, controllerVersion);
  }

  receive(request: ConfigRequest): void {
    const { kind } = request;
    if (kind.case !== 'ack' && kind.case !== 'nack') return this.#events.ignored(this, `unexpected ${kind.case ?? 'empty'} request after subscribe`);
    const inFlight = this.#inFlight;
    if (!inFlight || kind.value.nonce !== inFlight.nonce) return this.#events.ignored(this, `${kind.case} for nonce ${JSON.stringify(kind.value.nonce.slice(0, 64))}, which is not the one outstanding`);
    this.#inFlight = undefined;
    if (kind.case === 'ack') {
      this.#held = inFlight.versions;
      this.#settle(inFlight.version, inFlight.controllerVersion);
    } else {
      this.#refusedVersion = inFlight.version;
      this.lastError = kind.value.errors.length > 0 ? boundErrors(kind.value.errors) : ['the proxy refused the config without saying why'];
      this.#events.nacked(this, inFlight.version, this.lastError);
    }
    this.push();
  }
}

/** A NACK's reasons end up in logs and on a Gateway's status: at most 20 lines of 1 KiB each. */
export const MAX_NACK_ERRORS = 20;
export const MAX_NACK_ERROR_CHARS = 1024;

function boundErrors(errors: readonly string[]): string[] {
  const kept = errors.slice(0, MAX_NACK_ERRORS).map((e) => (e.length > MAX_NACK_ERROR_CHARS ? `${e.slice(0, MAX_NACK_ERROR_CHARS)}…` : e));
  if (errors.length > MAX_NACK_ERRORS) kept.push(`… and ${errors.length - MAX_NACK_ERRORS} more`);
  return kept;
}
