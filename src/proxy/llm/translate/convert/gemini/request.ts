/** Canonical request → Gemini generateContent request (the model travels in the URL path). */
import type { ImageSource, Part, Request } from '../../canonical.ts';
import type { GeminiContent, GeminiPart, GeminiRequest } from '../../formats/gemini.ts';
import { compact, effortToBudget, parseArguments, toolResultText } from '../shared.ts';
import { replayableSignature } from '../signatures.ts';

/** Gemini's documented placeholder signature for function calls that did not come from a Gemini model. */
export const FOREIGN_CALL_SIGNATURE = 'skip_thought_signature_validator';

export function writeGeminiRequest(req: Request): GeminiRequest {
  // functionResponse names the function, not the call id: remember which call had which name.
  const callNames = new Map<string, string>();
  for (const m of req.messages) for (const p of m.parts) if (p.type === 'tool_call') callNames.set(p.id, p.name);

  const contents: GeminiContent[] = [];
  for (const m of req.messages) {
    const parts = writeParts(m.parts, callNames);
    if (parts.length) contents.push({ role: m.role === 'assistant' ? 'model' : 'user', parts });
  }
  const out: GeminiRequest = { contents };
  if (req.system.length) out.systemInstruction = { parts: req.system.map((s) => ({ text: s.text })) };
  if (req.tools?.length) {
    out.tools = [{ functionDeclarations: req.tools.map((t) => compact({ name: t.name, description: t.description, parametersJsonSchema: { ...t.parameters } })) }];
  }
  if (req.toolChoice !== undefined) {
    const c = req.toolChoice;
    out.toolConfig = { functionCallingConfig: c === 'auto' ? { mode: 'AUTO' } : c === 'none' ? { mode: 'NONE' } : c === 'required' ? { mode: 'ANY' } : { mode: 'ANY', allowedFunctionNames: [c.name] } };
  }
  const thinkingBudget = req.reasoning?.disabled ? 0 : req.reasoning?.budgetTokens ?? (req.reasoning?.effort ? effortToBudget(req.reasoning.effort) : undefined);
  const gen = compact({
    maxOutputTokens: req.maxTokens,
    temperature: req.temperature,
    topP: req.topP,
    topK: req.topK,
    stopSequences: req.stop?.length ? [...req.stop] : undefined,
    responseMimeType: req.outputFormat ? 'application/json' : undefined,
    responseJsonSchema: req.outputFormat?.type === 'json_schema' ? { ...req.outputFormat.schema } : undefined,
    thinkingConfig: thinkingBudget === undefined ? undefined : thinkingBudget === 0 ? { thinkingBudget: 0 } : { thinkingBudget, includeThoughts: true },
  });
  if (Object.keys(gen).length) out.generationConfig = gen;
  return out;
}

function writeParts(parts: readonly Part[], callNames: Map<string, string>): GeminiPart[] {
  const out: GeminiPart[] = [];
  // A thoughtSignature belongs to the part that follows the reasoning it seals.
  let pendingSignature: string | undefined;
  // Reasoning another vendor signed was dropped: Gemini 3 still wants a signature on the function call it preceded.
  let foreignSignature = false;
  for (const p of parts) {
    let part: GeminiPart;
    switch (p.type) {
      case 'thinking': {
        const signature = replayableSignature(p, 'gemini');
        if (signature) pendingSignature = signature;
        else if (p.signature) foreignSignature = true;
        continue;
      }
      case 'redacted_thinking':
      case 'web_search':
        continue;
      case 'text':
        part = { text: p.text };
        break;
      case 'image':
        part = imagePart(p.source);
        break;
      case 'tool_call':
        part = { functionCall: { name: p.name, args: parseArguments(p.arguments) } };
        break;
      case 'tool_result':
        part = { functionResponse: { name: callNames.get(p.toolCallId) ?? p.toolCallId, response: resultObject(toolResultText(p.content), p.isError) } };
        break;
    }
    if (pendingSignature) {
      part.thoughtSignature = pendingSignature;
      pendingSignature = undefined;
      foreignSignature = false;
    } else if (foreignSignature && part.functionCall) {
      // Google's documented stand-in for calls that no Gemini model produced (a conversation moved from another model).
      part.thoughtSignature = FOREIGN_CALL_SIGNATURE;
      foreignSignature = false;
    }
    out.push(part);
  }
  return out;
}

function imagePart(src: ImageSource): GeminiPart {
  if (src.kind === 'base64') return { inlineData: { mimeType: src.mediaType, data: src.data } };
  return { fileData: { mimeType: mimeFromUrl(src.url), fileUri: src.url } };
}

function mimeFromUrl(url: string): string {
  const ext = /\.([a-z0-9]+)(?:$|[?#])/i.exec(url)?.[1]?.toLowerCase();
  if (ext === 'png') return 'image/png';
  if (ext === 'gif') return 'image/gif';
  if (ext === 'webp') return 'image/webp';
  return 'image/jpeg';
}

/** Gemini wants an object; a JSON object result is passed as is, anything else is wrapped. */
function resultObject(text: string, isError: boolean | undefined): Record<string, unknown> {
  if (isError) return { error: text };
  try {
    const v: unknown = JSON.parse(text);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // plain text result
  }
  return { result: text };
}
