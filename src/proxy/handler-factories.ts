import { llmHandlerFactory } from './llm/backend-handler.ts';
import { mcpHandlerFactory } from './mcp/backend-handler.ts';
import type { HandlerFactory } from './backends/handlers.ts';
import { dynamicForwardHandlerFactory } from './backends/dynamic-forward/handler.ts';
import { agentRuntimeHandlerFactory } from './backends/agent-runtime/handler.ts';
import { inModule } from './backends/in-module.ts';

/** Every backend type served in-process, asked in order; the first that claims a backend serves it. */
export const BACKEND_HANDLER_FACTORIES: readonly HandlerFactory[] = [inModule('mcp', mcpHandlerFactory), inModule('llm', llmHandlerFactory), inModule('forward', dynamicForwardHandlerFactory), agentRuntimeHandlerFactory];
