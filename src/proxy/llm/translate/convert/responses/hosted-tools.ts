/**
 * OpenAI Responses hosted tools on translated routes. Web search becomes the provider's own
 * search where it has one (Anthropic's `web_search` server tool, Gemini's `googleSearch`); the
 * model's answer comes back as ordinary output text. Every other hosted tool runs on OpenAI's
 * side only, so a request naming one is refused (400, naming the type) rather than sent without it.
 */
import type { ToolChoice, WebSearch } from '../../canonical.ts';
import { TranslationError } from '../../errors.ts';
import type { UpstreamFormat } from '../../providers/types.ts';
import { compact } from '../shared.ts';

/** The Responses tool types that ask for a web search (GA, preview, and their dated aliases). */
export const WEB_SEARCH_TOOL_TYPES: ReadonlySet<string> = new Set(['web_search', 'web_search_preview', 'web_search_2025_08_26', 'web_search_preview_2025_03_11']);

/** Anthropic's web search server tool version written upstream. */
export const ANTHROPIC_WEB_SEARCH_TYPE = 'web_search_20250305';

type Dict = Readonly<Record<string, unknown>>;
const dict = (v: unknown): Dict | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Dict) : undefined);
const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

/** A hosted tool of the request: web search is read into the canonical form, anything else is refused. */
export function readHostedTool(tool: Dict): WebSearch {
  const type = String(tool.type);
  if (!WEB_SEARCH_TOOL_TYPES.has(type)) {
    throw new TranslationError(`tool type ${JSON.stringify(type)} is hosted by OpenAI and cannot be translated for this provider; only function and web_search tools can`, 400, 'tools');
  }
  const domains = dict(tool.filters)?.allowed_domains;
  const location = dict(tool.user_location);
  const userLocation = location ? compact({ city: str(location.city), region: str(location.region), country: str(location.country), timezone: str(location.timezone) }) : undefined;
  return compact({
    allowedDomains: Array.isArray(domains) && domains.length > 0 ? domains.map(String) : undefined,
    userLocation: userLocation && Object.keys(userLocation).length > 0 ? userLocation : undefined,
  });
}

/**
 * Adds the provider's search tool to an upstream body written from a canonical request that asks
 * for web search; refuses formats without one. Domain filters are never dropped: a provider that
 * cannot restrict its search refuses them.
 */
export function addWebSearch(format: UpstreamFormat, body: Record<string, unknown>, search: WebSearch, choice?: ToolChoice): Record<string, unknown> {
  const tools = Array.isArray(body.tools) ? (body.tools as unknown[]) : [];
  // "required" with web search as the only tool means "search": the writers only see function tools.
  const searchForced = choice === 'required' && tools.length === 0;
  if (format === 'messages') {
    const tool = compact({
      type: ANTHROPIC_WEB_SEARCH_TYPE,
      name: 'web_search',
      allowed_domains: search.allowedDomains ? [...search.allowedDomains] : undefined,
      user_location: search.userLocation ? { type: 'approximate', ...search.userLocation } : undefined,
    });
    return { ...body, tools: [...tools, tool], ...(searchForced ? { tool_choice: { type: 'any' } } : {}) };
  }
  if (format === 'gemini') {
    if (search.allowedDomains) throw new TranslationError('web_search `filters.allowed_domains` cannot be honoured by Google Search grounding; remove the filter for this provider', 400, 'tools');
    if (searchForced) throw new TranslationError('tool_choice "required" cannot force a Google Search grounding call; use "auto"', 400, 'tool_choice');
    // "none" forbids tool use; Gemini's function-calling mode does not cover grounding, so the search is left out.
    if (choice === 'none') return body;
    return { ...body, tools: [...tools, { googleSearch: {} }] };
  }
  const where = format === 'converse' ? 'Bedrock Converse' : format === 'chat' ? 'an OpenAI-compatible chat completions upstream' : `a ${format} upstream`;
  throw new TranslationError(`tool type "web_search" has no equivalent on ${where}`, 400, 'tools');
}
