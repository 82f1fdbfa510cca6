/** MCPBackend: MCP targets multiplexed behind one endpoint. */
import { List, Obj, OneOf, Opt } from '../schema/build.ts';
import { exactlyOne, onlyWith, uniqueBy } from '../schema/rules.ts';
import { LongString, Port, SectionName, ShortString } from '../scalars.ts';
import { LabelSelector } from '../refs.ts';
import { BackendSimple } from '../policies/variants.ts';
import { Str } from '../schema/build.ts';

export const MCP_PROTOCOLS = ['StreamableHTTP', 'SSE'] as const;

export const McpTarget = () =>
  Obj({
    host: Opt(ShortString()),
    backendRef: Opt(Obj({ name: Str(1, 253) }, { description: 'same-namespace Service by name (replaces host only)' })),
    port: Port(),
    path: Opt(LongString({ description: 'default /sse for SSE and /mcp for StreamableHTTP' })),
    protocol: Opt(OneOf(MCP_PROTOCOLS)),
    policies: Opt(BackendSimple('host-based targets only; merge order: policy object < backend < this field')),
  }, {
    rules: [exactlyOne(['host', 'backendRef']), { ...onlyWith('policies', 'host'), message: 'policies may only be set on a host-based target (not with backendRef)' }],
  });

export const McpTargetSelector = () =>
  Obj({
    name: SectionName({ description: 'target name; prefixes tool and prompt names; policies target it with sectionName' }),
    selector: Opt(Obj({
      namespaces: Opt(LabelSelector("namespaces searched; only the backend's own when unset")),
      services: Opt(LabelSelector('Services selected')),
    })),
    static: Opt(McpTarget()),
  }, { rules: [exactlyOne(['selector', 'static'])] });

export const MCPBackend = () =>
  Obj({
    targets: List(McpTargetSelector(), { min: 1, max: 128, rules: [uniqueBy('name')] }),
    sessionRouting: Opt(OneOf(['Stateful', 'Stateless'] as const, { default: 'Stateful', description: 'Stateful keeps a session (mcp-session-id) on one replica' })),
    failureMode: Opt(OneOf(['FailClosed', 'FailOpen'] as const, { default: 'FailClosed', description: 'FailOpen skips failed targets' })),
    prefixMode: Opt(OneOf(['Conditional', 'Always', 'Never'] as const, { default: 'Conditional', description: 'prefix tool and prompt names with the target name' })),
  });

