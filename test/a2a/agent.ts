/**
 * An upstream A2A agent for tests, built with the official @a2a-js/sdk server (v1.0 protocol) on
 * express: JSON-RPC at `/a2a/jsonrpc`, HTTP+JSON/REST at `/a2a/rest`, the v1.0 card at `/.well-known/agent-card.json`, and a
 * hand-written v0.3-shaped card at the older `/.well-known/agent.json`. It echoes each message's
 * text and records the headers of every request it gets (what the gateway sent on).
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { Role, type AgentCard, type SendMessageRequest } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';

export interface TestAgent {
  readonly port: number;
  /** Headers of each request, in order (path, method, headers). */
  readonly seen: { path: string; method: string; headers: Record<string, string | string[] | undefined> }[];
  close(): Promise<void>;
}

/** The v0.3 card shape: `url` + `preferredTransport`, `additionalInterfaces[].transport`. */
function v03Card(origin: string): Record<string, unknown> {
  return {
    protocolVersion: '0.3.0', name: 'echo agent (v0.3 card)', description: 'echoes', version: '1.0.0',
    url: `${origin}/a2a/jsonrpc`, preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url: `${origin}/a2a/jsonrpc`, transport: 'JSONRPC' }, { url: `${origin}/a2a/rest`, transport: 'HTTP+JSON' }],
    provider: { organization: 'tests', url: 'https://example.org/about' },
    documentationUrl: 'https://example.org/docs',
    capabilities: { streaming: true }, defaultInputModes: ['text'], defaultOutputModes: ['text'],
    skills: [{ id: 'echo', name: 'echo', description: 'echoes text', tags: [] }],
  };
}

function v10Card(origin: string): AgentCard {
  return {
    name: 'echo agent', description: 'echoes', version: '1.0.0',
    supportedInterfaces: [
      { url: `${origin}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      { url: `${origin}/a2a/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
    ],
    provider: { organization: 'tests', url: 'https://example.org/about' },
    documentationUrl: 'https://example.org/docs',
    capabilities: { streaming: true, pushNotifications: false, extensions: [] } as unknown as AgentCard['capabilities'],
    securitySchemes: {}, securityRequirements: [], defaultInputModes: ['text'], defaultOutputModes: ['text'],
    skills: [{ id: 'echo', name: 'echo', description: 'echoes text', tags: [], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }] as unknown as AgentCard['skills'],
    signatures: [],
  };
}

const echo: AgentExecutor = {
  async execute(context, bus) {
    const text = context.userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
    // "slow" answers after 2 s: what the timeout rows cut.
    if (text === 'slow') await new Promise((resolve) => setTimeout(resolve, 2000));
    bus.publish(AgentEvent.message({
      messageId: `reply-${context.userMessage.messageId}`, contextId: context.contextId, taskId: '', role: Role.ROLE_AGENT,
      parts: [{ content: { $case: 'text', value: `echo: ${text}` }, metadata: undefined, filename: '', mediaType: 'text/plain' }] as never,
      metadata: undefined, extensions: [], referenceTaskIds: [],
    }));
    bus.finished();
  },
  cancelTask: () => Promise.resolve(),
};

export async function startAgent(): Promise<TestAgent> {
  const seen: TestAgent['seen'] = [];
  const app = express();
  let origin = '';
  app.use((req, _res, next) => {
    seen.push({ path: req.path, method: req.method, headers: { ...req.headers } });
    next();
  });
  // The handler's own card also declares the v0.3 JSON-RPC interface, which the compat layer asks for.
  const own = v10Card('http://placeholder');
  own.supportedInterfaces.push({ url: 'http://placeholder/a2a/jsonrpc', protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' });
  const handler = new DefaultRequestHandler(own, new InMemoryTaskStore(), echo);
  // The card names the agent's own address, as a real agent's would: the gateway must replace it.
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: { getAgentCard: () => Promise.resolve(v10Card(origin)) } }));
  app.get('/.well-known/agent.json', (_req, res) => {
    res.json(v03Card(origin));
  });
  // v0.3 clients (the older card's readers) are served too.
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: true } }));
  app.use('/a2a/rest', restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
  return {
    port,
    seen,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** A user message with one text part, as the SDK client sends it. */
export function userMessage(text: string): SendMessageRequest {
  return {
    tenant: '', configuration: undefined, metadata: undefined,
    message: {
      messageId: `m-${Math.random().toString(36).slice(2)}`, contextId: '', taskId: '', role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }] as never,
      metadata: undefined, extensions: [], referenceTaskIds: [],
    },
  };
}

/** The text of a sendMessage / stream answer that is a Message. */
export function textOf(answer: unknown): string {
  const message = answer as { parts?: { content?: { $case: string; value: unknown } }[] };
  return (message.parts ?? []).map((p) => (p.content?.$case === 'text' ? String(p.content.value) : '')).join('');
}
