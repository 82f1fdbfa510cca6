import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { BoundedLabel, OTHER } from './bounded-label.ts';
import { countMcpCall, countPolicyOutcome, LlmCallMeter, registerAiMetrics } from './ai-metrics.ts';

async function text(): Promise<string> {
  const registry = new Registry();
  registerAiMetrics(registry);
  return registry.metrics();
}

function value(metrics: string, pattern: RegExp): number {
  const line = metrics.split('\n').find((l) => pattern.test(l));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('GenAI metrics', () => {
  it('an LLM attempt records input and output token usage, duration and time to first token under its model', async () => {
    const meter = new LlmCallMeter('backend/default/llm', { name: 'openai-main', provider: { providerA: {} } as never }, 'Completions');
    meter.request('gpt-unit-test');
    meter.chunk();
    meter.chunk();
    meter.usage({ inputTokens: 11, outputTokens: 7, totalTokens: 18 });
    meter.end({ status: 200 });
    const m = await text();
    const labels = 'gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="gpt-unit-test",backend="backend/default/llm",provider="openai-main"';
    assert.equal(value(m, new RegExp(`^gen_ai_client_token_usage_sum\\{${labels},gen_ai_token_type="input"\\}`)), 11);
    assert.equal(value(m, new RegExp(`^gen_ai_client_token_usage_sum\\{${labels},gen_ai_token_type="output"\\}`)), 7);
    assert.equal(value(m, new RegExp(`^gen_ai_server_time_to_first_token_seconds_count\\{${labels}\\}`)), 1, 'the first chunk only');
    assert.equal(value(m, new RegExp(`^gen_ai_client_operation_duration_seconds_count\\{${labels},error_type=""\\}`)), 1);
  });

  it('a failed attempt carries its status as error_type', async () => {
    const meter = new LlmCallMeter('backend/default/llm', { name: 'p', provider: { providerD: {} } as never }, 'Messages');
    meter.request('claude-unit-test');
    meter.end({ status: 429 });
    assert.equal(value(await text(), /^gen_ai_client_operation_duration_seconds_count\{[^}]*gen_ai_request_model="claude-unit-test"[^}]*error_type="429"\}/), 1);
  });

  it('MCP calls count per target, method and tool; policy outcomes per policy and outcome', async () => {
    countMcpCall('backend/default/mcp', 'weather', 'tools/call', 'forecast', true);
    countMcpCall('backend/default/mcp', 'weather', 'tools/call', 'forecast', false);
    countMcpCall('backend/default/mcp', 'weather', 'tools/list', undefined, true);
    countPolicyOutcome('rateLimit', 'limited');
    const m = await text();
    assert.equal(value(m, /^switchboard_mcp_calls_total\{backend="backend\/default\/mcp",target="weather",mcp_method_name="tools\/call",gen_ai_tool_name="forecast",outcome="ok"\}/), 1);
    assert.equal(value(m, /^switchboard_mcp_calls_total\{[^}]*gen_ai_tool_name="forecast",outcome="error"\}/), 1);
    assert.equal(value(m, /^switchboard_mcp_calls_total\{[^}]*mcp_method_name="tools\/list",gen_ai_tool_name="",outcome="ok"\}/), 1);
    assert.ok(value(m, /^switchboard_policy_outcomes_total\{policy="rateLimit",outcome="limited"\}/) >= 1);
  });
});

describe('BoundedLabel', () => {
  const cases = [
    { name: 'values under the cap pass unchanged', max: 3, input: ['a', 'b', 'a', 'c'], want: ['a', 'b', 'a', 'c'] },
    { name: 'new values past the cap are other, known ones stay', max: 2, input: ['a', 'b', 'c', 'a', 'd'], want: ['a', 'b', OTHER, 'a', OTHER] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const label = new BoundedLabel(c.max);
      assert.deepEqual(c.input.map((v) => label.value(v)), c.want);
    });
  }
  it('long values are cut to maxLength', () => {
    assert.equal(new BoundedLabel(5, 4).value('abcdefgh'), 'abcd');
  });
});
