/**
 * Envoy ext_authz over gRPC: `envoy.service.auth.v3.Authorization/Check`. Builds the CheckRequest
 * from the downstream request and turns the CheckResponse into an allow (with header mutations)
 * or a deny (with the service's status, body and headers).
 */
import { create, type JsonObject as ProtoJsonObject } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { createClient, type Client } from '@connectrpc/connect';
import { grpcCallFailure } from '../call-failure.ts';
import type { Activation, Program } from '../../../cel/index.ts';
import type { JsonObject } from '../../../ir/policy.ts';
import { AddressSchema, SocketAddressSchema } from '../gen/envoy/config/core/v3/address_pb.js';
import { MetadataSchema } from '../gen/envoy/config/core/v3/base_pb.js';
import {
  AttributeContext_HttpRequestSchema, AttributeContext_PeerSchema, AttributeContext_RequestSchema, AttributeContextSchema,
} from '../gen/envoy/service/auth/v3/attribute_context_pb.js';
import { Authorization, CheckRequestSchema, type CheckRequest, type CheckResponse } from '../gen/envoy/service/auth/v3/external_auth_pb.js';
import { grpcChannel, withUrlFallback, type GrpcChannel } from '../endpoint.ts';
import { compileMap, evalValues } from '../expressions.ts';
import { fromHeaderOptions, headerPairs, headerValueText, joinedHeaders, toHeaderMap, type HeaderPair } from '../headers.ts';
import {
  bodyTooLarge, DEFAULT_TIMEOUT_MS, unavailable,
  type AuthzDecision, type DownstreamRequest, type ExtAuthConfig, type ExtAuthzClient, type ExtAuthzOptions,
} from './types.ts';

/** The metadata namespace Envoy's JWT filter writes; SPEC: used when requestMetadata is unset and a JWT was verified. */
const JWT_NAMESPACE = 'envoy.filters.http.jwt_authn';
const GRPC_OK = 0;
const FORBIDDEN = 403;

export class GrpcExtAuthzClient implements ExtAuthzClient {
  readonly bodyLimit?: number;
  readonly #config: ExtAuthConfig;
  readonly #channel: GrpcChannel;
  readonly #client: Client<typeof Authorization>;
  readonly #timeoutMs: number;
  readonly #requestMetadata: ReadonlyMap<string, Program>;

  constructor(config: ExtAuthConfig, options: ExtAuthzOptions = {}) {
    this.#config = config;
    if (config.forwardBody) this.bodyLimit = config.forwardBody.maxSize;
    // Expressions first: a compile error must not leave a channel behind.
    this.#requestMetadata = compileMap(config.grpc?.requestMetadata, 'extAuth.grpc.requestMetadata');
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#channel = grpcChannel(withUrlFallback(options.resolve)(config), options.connections);
    this.#client = createClient(Authorization, this.#channel.transport);
  }

  async check(request: DownstreamRequest, activation: Activation, signal?: AbortSignal): Promise<AuthzDecision> {
    if (this.bodyLimit !== undefined && request.body !== undefined && request.body.length > this.bodyLimit) return bodyTooLarge(this.bodyLimit);
    let response: CheckResponse;
    try {
      response = await this.#client.check(this.buildRequest(request, activation), { timeoutMs: this.#timeoutMs, signal });
    } catch (err) {
      return unavailable(this.#config.failureMode, grpcCallFailure(err, this.#timeoutMs));
    }
    return decide(response);
  }

  /** Exposed for tests and debugging: the CheckRequest sent for a request. */
  buildRequest(request: DownstreamRequest, activation: Activation): CheckRequest {
    const queryAt = request.url.indexOf('?');
    const body = this.bodyLimit !== undefined ? request.body : undefined;
    const http = create(AttributeContext_HttpRequestSchema, {
      id: request.id ?? '',
      method: request.method,
      headers: joinedHeaders(request.headers),
      headerMap: toHeaderMap(headerPairs(request.headers)),
      path: request.url,
      host: request.host,
      scheme: request.scheme,
      query: queryAt < 0 ? '' : request.url.slice(queryAt + 1),
      protocol: request.protocol,
      size: BigInt(body?.length ?? -1),
      ...(body ? { rawBody: body, body: new TextDecoder().decode(body) } : {}),
    });
    return create(CheckRequestSchema, {
      attributes: create(AttributeContextSchema, {
        source: peer(request.source),
        destination: peer(request.destination),
        request: create(AttributeContext_RequestSchema, { time: timestampFromMs(Date.now()), http }),
        contextExtensions: { ...this.#config.grpc?.contextExtensions },
        metadataContext: create(MetadataSchema, { filterMetadata: this.#filterMetadata(activation) }),
      }),
    });
  }

  #filterMetadata(activation: Activation): { [namespace: string]: ProtoJsonObject } {
    if (this.#requestMetadata.size > 0) {
      // Each entry names a metadata namespace; a map value becomes that namespace's struct.
      const out: { [namespace: string]: ProtoJsonObject } = {};
      for (const [namespace, value] of Object.entries(evalValues(this.#requestMetadata, activation))) {
        out[namespace] = (value !== null && typeof value === 'object' && !Array.isArray(value) ? value : { value }) as ProtoJsonObject;
      }
      return out;
    }
    const claims = activation.jwt;
    return Object.keys(claims).length > 0 ? { [JWT_NAMESPACE]: { payload: JSON.parse(JSON.stringify(claims, bigintAsNumber)) as ProtoJsonObject } } : {};
  }

  close(): void {
    this.#channel.close();
  }
}

function bigintAsNumber(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? Number(value) : value;
}

function peer(p: { address: string; port: number }) {
  return create(AttributeContext_PeerSchema, {
    address: create(AddressSchema, {
      address: { case: 'socketAddress', value: create(SocketAddressSchema, { address: p.address, portSpecifier: { case: 'portValue', value: p.port } }) },
    }),
  });
}

function decide(response: CheckResponse): AuthzDecision {
  const metadata = (response.dynamicMetadata ?? {}) as JsonObject;
  const okStatus = (response.status?.code ?? GRPC_OK) === GRPC_OK;
  if (okStatus && response.httpResponse.case !== 'deniedResponse') {
    const ok = response.httpResponse.case === 'okResponse' ? response.httpResponse.value : undefined;
    return {
      allowed: true,
      requestHeaders: fromHeaderOptions(ok?.headers ?? [], ok?.headersToRemove ?? []),
      responseHeaders: (ok?.responseHeadersToAdd ?? []).flatMap((o): HeaderPair[] => (o.header ? [[o.header.key.toLowerCase(), headerValueText(o.header)]] : [])),
      metadata: { ...(ok?.dynamicMetadata as JsonObject | undefined), ...metadata },
    };
  }
  const denied = response.httpResponse.case === 'deniedResponse' ? response.httpResponse.value : undefined;
  const code = denied?.status?.code ?? 0;
  return {
    allowed: false,
    // StatusCode values are the HTTP codes; Empty (0) or an unset status means Forbidden, as in Envoy.
    status: code >= 200 && code <= 599 ? code : FORBIDDEN,
    body: denied?.body ?? '',
    headers: (denied?.headers ?? []).flatMap((o): HeaderPair[] => (o.header ? [[o.header.key.toLowerCase(), headerValueText(o.header)]] : [])),
    reason: 'denied',
  };
}

