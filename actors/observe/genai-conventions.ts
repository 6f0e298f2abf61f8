// actors/observe/genai-conventions.ts: the names Warren's trace spans use, from the OpenTelemetry
// semantic conventions for generative AI (status: development; the agent, inference and execute-tool
// spans). They are spelled here rather than imported from @opentelemetry/semantic-conventions/incubating:
// that entry point is a large module, and the OpenTelemetry docs advise pinning unstable names in the
// instrumentation itself. Prompt and response content (gen_ai.input.messages, gen_ai.output.messages,
// gen_ai.system_instructions, gen_ai.tool.call.arguments/result) is never recorded.

export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  /** The name before gen_ai.provider.name (conventions up to 1.36), still read by many backends. */
  system: 'gen_ai.system',
  conversationId: 'gen_ai.conversation.id',
  agentName: 'gen_ai.agent.name',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheCreationTokens: 'gen_ai.usage.cache_creation.input_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
} as const;

export const OPERATION = { invokeAgent: 'invoke_agent', chat: 'chat', executeTool: 'execute_tool' } as const;

/** gen_ai.provider.name for Warren's provider ids (well-known values where one applies, else Warren's id). */
const PROVIDER_NAME: Record<string, string> = { anthropic: 'anthropic', openai: 'openai', gemini: 'gcp.gemini' };
/** gen_ai.system (the older attribute) for Warren's provider ids. */
const SYSTEM: Record<string, string> = { anthropic: 'anthropic', openai: 'openai', gemini: 'gemini' };

/** The provider attributes of every span of a session on `provider`. */
export function providerAttributes(provider: string): Record<string, string> {
  return { [GEN_AI.providerName]: PROVIDER_NAME[provider] ?? provider, [GEN_AI.system]: SYSTEM[provider] ?? provider };
}
