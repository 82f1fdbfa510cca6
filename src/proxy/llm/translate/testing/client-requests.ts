/** The client requests the response and stream fixtures are answered for (one per client route). */
import type { RouteType } from '../config.ts';

const weatherSchema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

export const CLIENT_ROUTES = ['Completions', 'Messages', 'Responses'] as const satisfies readonly RouteType[];
export type ClientRoute = (typeof CLIENT_ROUTES)[number];

export function clientRequest(route: ClientRoute, stream: boolean): Record<string, unknown> {
  if (route === 'Completions') {
    return {
      model: 'client-model', stream, ...(stream ? { stream_options: { include_usage: true } } : {}),
      messages: [{ role: 'user', content: 'What is the weather?' }],
      tools: [{ type: 'function', function: { name: 'get.weather', parameters: weatherSchema } }],
    };
  }
  if (route === 'Messages') {
    return {
      model: 'client-model', stream, max_tokens: 1024,
      messages: [{ role: 'user', content: 'What is the weather?' }],
      tools: [{ name: 'get.weather', input_schema: weatherSchema }],
    };
  }
  return {
    model: 'client-model', stream, input: 'What is the weather?',
    tools: [{ type: 'function', name: 'get.weather', parameters: weatherSchema }],
  };
}
