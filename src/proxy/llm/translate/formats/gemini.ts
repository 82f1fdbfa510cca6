/** Google Gemini generateContent wire format (v1beta; Vertex's publishers/google models speak the same). */

export interface GeminiPart {
  text?: string;
  /** True when the part is a thought summary. */
  thought?: boolean;
  /** Opaque reasoning state attached to the part that follows the thinking; must be sent back unchanged. */
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response: Record<string, unknown> };
}

export interface GeminiContent { role?: 'user' | 'model'; parts: GeminiPart[] }

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  /** Full JSON Schema (`parameters` only takes the OpenAPI subset). */
  parametersJsonSchema?: Record<string, unknown>;
}

export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: GeminiContent;
  tools?: { functionDeclarations: GeminiFunctionDeclaration[] }[];
  toolConfig?: { functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } };
  generationConfig?: {
    maxOutputTokens?: number;
    temperature?: number;
    topP?: number;
    topK?: number;
    stopSequences?: string[];
    responseMimeType?: string;
    responseJsonSchema?: Record<string, unknown>;
    thinkingConfig?: { thinkingBudget?: number; includeThoughts?: boolean };
  };
  [extra: string]: unknown;
}

export type GeminiFinishReason =
  | 'FINISH_REASON_UNSPECIFIED' | 'STOP' | 'MAX_TOKENS' | 'SAFETY' | 'RECITATION' | 'LANGUAGE' | 'OTHER'
  | 'BLOCKLIST' | 'PROHIBITED_CONTENT' | 'SPII' | 'MALFORMED_FUNCTION_CALL';

export interface GeminiUsageMetadata {
  /** Includes cachedContentTokenCount. */
  promptTokenCount?: number;
  /** Excludes thoughtsTokenCount. */
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  totalTokenCount?: number;
}

export interface GeminiResponse {
  candidates?: { content?: GeminiContent; finishReason?: GeminiFinishReason; index?: number; groundingMetadata?: GeminiGroundingMetadata }[];
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
  promptFeedback?: { blockReason?: string };
}

/** What Google Search grounding found and which spans of the answer each source supports. */
export interface GeminiGroundingMetadata {
  webSearchQueries?: string[];
  groundingChunks?: { web?: { uri?: string; title?: string } }[];
  groundingSupports?: {
    /** Offsets in UTF-8 bytes within the part `partIndex`; proto3 omits zero values. */
    segment?: { partIndex?: number; startIndex?: number; endIndex?: number; text?: string };
    groundingChunkIndices?: number[];
  }[];
  searchEntryPoint?: { renderedContent?: string };
}

export interface GeminiCountTokensRequest { generateContentRequest: GeminiRequest & { model: string } }
export interface GeminiCountTokensResponse { totalTokens: number }

export interface GeminiError { error: { code: number; message: string; status: string } }
