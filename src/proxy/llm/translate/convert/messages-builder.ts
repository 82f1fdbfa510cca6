import type { Message, Part } from '../canonical.ts';

/**
 * Collects canonical messages, merging consecutive turns of one role: chat completions sends one
 * `tool` message per result, while Anthropic wants every result of a turn in one user message and
 * Bedrock rejects two user turns in a row.
 */
export class MessageList {
  readonly messages: Message[] = [];

  push(role: Message['role'], parts: readonly Part[]): void {
    if (parts.length === 0) return;
    const last = this.messages.at(-1);
    if (last && last.role === role) {
      this.messages[this.messages.length - 1] = { role, parts: [...last.parts, ...parts] };
    } else {
      this.messages.push({ role, parts: [...parts] });
    }
  }
}
