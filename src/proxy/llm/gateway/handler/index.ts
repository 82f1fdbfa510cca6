/**
 * One AI backend served in-process: route type by path, `policies.ai` on the body, the plan from
 * the translation core, credentials, then the provider — trying the next provider (and the next
 * priority group) when an attempt fails before anything reached the client — with the answer
 * translated back, streams event by event. Every failure reaches the client in its own format.
 *
 * The pieces: serve.ts (one request across providers), attempt.ts (policy layer, guards, plan),
 * dispatch.ts and stream.ts (the provider call), respond.ts (writing answers), guards.ts (prompt
 * guard hooks), upgrade.ts (WebSocket upgrades), accounting.ts (usage), state.ts (shared types).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../../../common/logger.ts';
import type { AiBackendIR } from '../../../../ir/ai.ts';
import type { HandlerRequest } from '../../../backends/handlers.ts';
import type { DownstreamRequest, DownstreamResponse } from '../../../http/downstream.ts';
import { routeTypeFor } from '../../translate/route-type.ts';
import { MAX_PROVIDER_RESPONSE_BYTES } from '../bounded-body.ts';
import { LlmCredentials } from '../credentials/index.ts';
import { ModelRouter } from '../model-router.ts';
import { ProviderPicker, type ProviderChoice } from '../picker.ts';
import { ProviderHealth, type ProviderHealthBoard } from '../provider-health.ts';
import { RealtimeRelay } from '../realtime.ts';
import { ProviderPools, ReplicaTurns } from '../upstream.ts';
import { logUsage } from './accounting.ts';
import { serveRequest } from './serve.ts';
import { aiOf, effectivePolicy, type GatewayState } from './state.ts';
import { gateUpgrade, refuseNonRealtimeUpgrade } from './upgrade.ts';

export { effectivePolicy } from './state.ts';

export interface LlmHandlerDeps {
  readonly logger: Logger;
  readonly credentials?: LlmCredentials;
  /** Cap on a buffered provider answer; default MAX_PROVIDER_RESPONSE_BYTES. */
  readonly maxResponseBytes?: number;
  /** Where provider health lives across handlers (admin API, metrics); without it the handler keeps its own. */
  readonly providerHealth?: ProviderHealthBoard;
  /** How a group's first provider is chosen: by health (default) or in plain rotation (benchmarks compare the two). */
  readonly providerChoice?: ProviderChoice;
}

export class LlmBackendHandler {
  readonly #gw: GatewayState;
  readonly #picker: ProviderPicker;
  /** ProxyModels only (ir.models): the request's model chooses the picker (model-router.ts). */
  readonly #router: ModelRouter | undefined;
  readonly #healthBoard: ProviderHealthBoard | undefined;
  #realtime: RealtimeRelay | undefined;

  constructor(ir: AiBackendIR, deps: LlmHandlerDeps) {
    const names = [...ir.groups, ...(ir.models ?? []).flatMap((m) => m.groups)].flatMap((g) => g.providers.map((p) => p.name));
    this.#healthBoard = deps.providerHealth;
    const health = deps.providerHealth?.attach(ir.key, names) ?? new ProviderHealth(ir.key, names);
    this.#gw = {
      ir, logger: deps.logger, health, pools: new ProviderPools(), replicas: new ReplicaTurns(),
      credentials: deps.credentials ?? new LlmCredentials(), maxResponseBytes: deps.maxResponseBytes ?? MAX_PROVIDER_RESPONSE_BYTES,
    };
    this.#picker = new ProviderPicker(ir.groups, deps.providerChoice === 'rotation' ? undefined : health);
    this.#router = ir.models ? new ModelRouter(ir.models, deps.providerChoice === 'rotation' ? undefined : health, undefined, ir.catalog) : undefined;
  }

  async close(): Promise<void> {
    this.#healthBoard?.detach(this.#gw.health);
    await Promise.all([this.#gw.pools.close(), this.#realtime?.close()]);
  }

  /**
   * A WebSocket upgrade: only the Realtime route takes one (realtime.ts); anything else is refused
   * with a 400 in OpenAI's error format. Providers are tried in the same order as requests.
   */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, request: HandlerRequest): Promise<void> {
    const gw = this.#gw;
    const backendAi = aiOf(request.backendPolicy) ?? gw.ir.policy;
    if (routeTypeFor(request.path, backendAi?.routes) !== 'Realtime') {
      refuseNonRealtimeUpgrade(socket, request);
      return Promise.resolve();
    }
    this.#realtime ??= new RealtimeRelay({
      backendKey: gw.ir.key, logger: gw.logger, credentials: gw.credentials, replicas: gw.replicas, health: gw.health,
      account: (provider, model, usage, policy) => logUsage(gw, provider, 'Realtime', model, true, usage, policy),
    });
    const attempts = this.#picker.order().map((provider) => {
      const policy = effectivePolicy(request.backendPolicy, provider);
      return { provider, policy, ai: aiOf(policy) ?? gw.ir.policy };
    });
    return gateUpgrade(socket, request, attempts).then((gated) => (gated === undefined ? undefined : this.#realtime?.serve(req, socket, head, request, gated)));
  }

  /** Serves one request; resolves with the status the client saw and the body bytes written. */
  serve(req: DownstreamRequest, res: DownstreamResponse, request: HandlerRequest): Promise<{ status: number; bytes: number }> {
    return serveRequest(this.#gw, this.#picker, this.#router, req, res, request);
  }
}
