/** Canonical response → OpenAI Responses response object. */
import type { Citation, Request, Response } from '../../canonical.ts';
import type { TranslationContext } from '../../context.ts';
import type { ResponsesOutputItem, ResponsesResponse, ResponsesUrlCitation, ResponsesUsage, ResponsesWebSearchCall } from '../../formats/openai-responses.ts';
import { markSignature } from '../signatures.ts';
import { urlCitation } from '../text-runs.ts';
import type { Usage } from '../../usage.ts';

/** Redacted thinking and signed thinking both travel as encrypted_content; the prefix tells them apart on the way back. */
export const REDACTED_PREFIX = 'redacted_thinking:';

export function usageToResponsesUsage(u: Usage): ResponsesUsage {
  return {
    input_tokens: u.inputTokens,
    input_tokens_details: { cached_tokens: u.cachedInputTokens ?? 0 },
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens ?? 0 },
    total_tokens: u.totalTokens,
  };
}

/** The request fields a Responses object echoes back. */
export function responseShell(req: Request, id: string, model: string, createdAt: number): ResponsesResponse {
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: 'in_progress',
    model,
    output: [],
    usage: null,
    error: null,
    incomplete_details: null,
    instructions: req.system.length ? req.system.map((s) => s.text).join('\n') : null,
    metadata: {},
    parallel_tool_calls: req.parallelToolCalls ?? true,
    temperature: req.temperature ?? null,
    top_p: req.topP ?? null,
    max_output_tokens: req.maxTokens ?? null,
    tool_choice: req.toolChoice === undefined ? 'auto' : typeof req.toolChoice === 'string' ? req.toolChoice : { type: 'function', name: req.toolChoice.name },
    tools: (req.tools ?? []).map((t) => ({ type: 'function', name: t.name, description: t.description ?? null, parameters: t.parameters, strict: t.strict ?? null })),
    text: { format: req.outputFormat?.type === 'json_schema'
      ? { type: 'json_schema', name: req.outputFormat.name, schema: { ...req.outputFormat.schema }, strict: req.outputFormat.strict ?? null }
      : req.outputFormat ? { type: 'json_object' } : { type: 'text' } },
    reasoning: req.reasoning?.effort ? { effort: req.reasoning.effort, summary: null } : null,
  };
}

/** Responses' annotation for a canonical citation over `text` (offsets in characters). */
export function responsesAnnotation(text: string, c: Citation): ResponsesUrlCitation {
  const u = urlCitation(text, c);
  return { type: 'url_citation', start_index: u.start_index, end_index: u.end_index, title: u.title, url: u.url };
}

/** A finished web_search_call item. */
export function webSearchCall(id: string, queries: readonly string[], failed: boolean | undefined): ResponsesWebSearchCall {
  const action = { type: 'search' as const, query: queries[0] ?? '', ...(queries.length > 1 ? { queries: [...queries] } : {}) };
  return { type: 'web_search_call', id, status: failed ? 'failed' : 'completed', action };
}

export function writeResponsesResponse(res: Response, req: Request, ctx: TranslationContext): ResponsesResponse {
  const out = responseShell(req, ctx.newId('resp_'), res.model, ctx.now());
  const output: ResponsesOutputItem[] = [];
  let text = '';
  let citations: Citation[] | undefined;
  const flushText = () => {
    if (!text) return;
    const annotations = citations ? citations.map((c) => responsesAnnotation(text, c)) : [];
    output.push({ type: 'message', id: ctx.newId('msg_'), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations }] });
    text = '';
    citations = undefined;
  };
  for (const p of res.parts) {
    if (p.type === 'text') {
      if (p.citations) {
        citations ??= [];
        for (const c of p.citations) citations.push({ ...c, start: text.length + c.start, end: text.length + c.end });
      }
      text += p.text;
      continue;
    }
    flushText();
    if (p.type === 'thinking') {
      output.push({ type: 'reasoning', id: ctx.newId('rs_'), summary: p.text ? [{ type: 'summary_text', text: p.text }] : [], encrypted_content: p.signature === undefined ? null : markSignature(p.signature, p.family, 'openai') });
    } else if (p.type === 'redacted_thinking') {
      output.push({ type: 'reasoning', id: ctx.newId('rs_'), summary: [], encrypted_content: REDACTED_PREFIX + p.data });
    } else if (p.type === 'web_search') {
      output.push(webSearchCall(p.id.startsWith('ws_') ? p.id : ctx.newId('ws_'), p.queries, p.failed));
    } else if (p.type === 'tool_call') {
      output.push({ type: 'function_call', id: ctx.newId('fc_'), call_id: p.id, name: p.name, arguments: p.arguments, status: 'completed' });
    }
  }
  flushText();
  out.output = output;
  if (res.finishReason === 'length' || res.finishReason === 'content_filter') {
    out.status = 'incomplete';
    out.incomplete_details = { reason: res.finishReason === 'length' ? 'max_output_tokens' : 'content_filter' };
  } else {
    out.status = 'completed';
  }
  if (res.usage) out.usage = usageToResponsesUsage(res.usage);
  return out;
}
