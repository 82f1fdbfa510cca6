/** ProxyBackend: one backend (AI, MCP, A2A, static, dynamic forward proxy, cloud-A agent runtime) plus its policies. */
import type { Static } from 'typebox';
import { Obj, Opt, Str } from '../schema/build.ts';
import { exactlyOne, has } from '../schema/rules.ts';
import { JsonObject } from '../schema/build.ts';
import { Port, ShortString } from '../scalars.ts';
import { Conditions } from '../refs.ts';
import { BackendFull } from '../policies/variants.ts';
import { AIBackend } from './ai.ts';
import { MCPBackend } from './mcp.ts';

export const BACKEND_TYPES = ['ai', 'static', 'dynamicForwardProxy', 'mcp', 'cloudA', 'a2a'] as const;

const HostPort = (description: string) => Obj({ host: ShortString(), port: Port() }, { description });

export const ProxyBackendSpec = Obj({
  ai: Opt(AIBackend()),
  static: Opt(HostPort('a fixed host and port')),
  dynamicForwardProxy: Opt(JsonObject('send each request to the Host header or TLS SNI destination; apply access control')),
  mcp: Opt(MCPBackend()),
  cloudA: Opt(Obj({
    agentRuntime: Obj({
      agentRuntimeId: Str(1, 1024),
      qualifier: Opt(Str(1, 256, { description: 'alias or version' })),
    }),
  }, { description: 'a cloud-A agent runtime' })),
  a2a: Opt(HostPort('an agent-to-agent endpoint')),
  policies: Opt(BackendFull('backend policies; they beat policy objects that set the same field')),
}, {
  rules: [
    exactlyOne(BACKEND_TYPES),
    { path: '.policies.ai', message: 'policies.ai applies only to ai backends', cel: '!has(self.policies) || !has(self.policies.ai) || has(self.ai)', check: (s) => !has(s.policies, 'ai') || has(s, 'ai') },
    { path: '.policies.mcp', message: 'policies.mcp applies only to mcp backends', cel: '!has(self.policies) || !has(self.policies.mcp) || has(self.mcp)', check: (s) => !has(s.policies, 'mcp') || has(s, 'mcp') },
  ],
});

export const ProxyBackendStatus = Obj({ conditions: Opt(Conditions(8)) });

export type ProxyBackendSpec = Static<typeof ProxyBackendSpec>;
export type ProxyBackendStatus = Static<typeof ProxyBackendStatus>;
