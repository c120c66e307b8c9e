/** One call found in a model's output, before validation against the tool list. */
export interface ParsedToolCall {
  name: string;
  /** Arguments as the model wrote them (re-serialized when they came embedded in a larger JSON value). */
  argumentsJson: string;
  /** Parsed arguments; undefined when they are not valid JSON. */
  arguments: unknown;
  /** Why the call could not be read (missing name, bad JSON), when it could not. */
  problem?: string;
}

export interface ToolCallParse {
  calls: ParsedToolCall[];
  /** Output text outside the calls, trimmed. */
  text: string;
}

/**
 * Output formats the parser recognises. `auto` accepts all of them:
 * - `hermes`: `<tool_call>{"name": …, "arguments": {…}}</tool_call>` (Qwen, Hermes, many fine-tunes; the format
 *   the ToolCall node asks for by default);
 * - `json`: a bare JSON object or array of `{ name, arguments | parameters }` (Llama 3.x, after an optional
 *   `<|python_tag|>`);
 * - `mistral`: `[TOOL_CALLS]` followed by a JSON array.
 */
export type ToolCallFormat = 'auto' | 'hermes' | 'json' | 'mistral';

const HERMES = /<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g;

function readCall(value: unknown, source: string): ParsedToolCall {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { name: '', argumentsJson: source, arguments: undefined, problem: 'a tool call must be a JSON object' };
  }
  const record = value as Record<string, unknown>;
  const fn = typeof record.function === 'object' && record.function !== null ? (record.function as Record<string, unknown>) : record;
  const name = typeof fn.name === 'string' ? fn.name : '';
  let args: unknown = 'arguments' in fn ? fn.arguments : 'parameters' in fn ? fn.parameters : {};
  let argumentsJson: string;
  if (typeof args === 'string') {
    // Some models write the arguments as a JSON string inside the JSON object.
    argumentsJson = args;
    try {
      args = JSON.parse(args);
    } catch {
      return { name, argumentsJson, arguments: undefined, problem: 'arguments are not valid JSON' };
    }
  } else {
    argumentsJson = JSON.stringify(args);
  }
  if (!name) return { name, argumentsJson, arguments: args, problem: 'the call has no tool name' };
  return { name, argumentsJson, arguments: args };
}

function parseJsonCalls(source: string): ParsedToolCall[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch {
    return undefined;
  }
  const items = Array.isArray(value) ? value : [value];
  return items.map((item) => readCall(item, source));
}

/** Finds the tool calls in a model's output. Never throws: unreadable calls come back with a `problem`. */
export function parseToolCalls(output: string, format: ToolCallFormat = 'auto'): ToolCallParse {
  const text = output.trim();
  if (format === 'auto' || format === 'hermes') {
    const matches = [...text.matchAll(HERMES)];
    if (matches.length > 0) {
      const calls = matches.map((match) => {
        const body = (match[1] ?? '').trim();
        const parsed = parseJsonCalls(body);
        if (!parsed) return { name: '', argumentsJson: body, arguments: undefined, problem: 'the call is not valid JSON' };
        return parsed[0] as ParsedToolCall;
      });
      return { calls, text: text.replace(HERMES, '').trim() };
    }
    if (format === 'hermes') return { calls: [], text };
  }
  if (format === 'auto' || format === 'mistral') {
    const marker = text.indexOf('[TOOL_CALLS]');
    if (marker >= 0) {
      const body = text.slice(marker + '[TOOL_CALLS]'.length).trim();
      const parsed = parseJsonCalls(body);
      const calls = parsed ?? [{ name: '', argumentsJson: body, arguments: undefined, problem: 'the calls are not valid JSON' }];
      return { calls, text: text.slice(0, marker).trim() };
    }
    if (format === 'mistral') return { calls: [], text };
  }
  const body = text.replace(/^<\|python_tag\|>/, '').trim();
  if (body.startsWith('{') || body.startsWith('[')) {
    const parsed = parseJsonCalls(body);
    // Bare JSON only counts as a call when it looks like one: plain JSON text is a normal answer.
    if (parsed && parsed.every((call) => call.name)) return { calls: parsed, text: '' };
    if (!parsed && /"name"\s*:/.test(body)) {
      return { calls: [{ name: '', argumentsJson: body, arguments: undefined, problem: 'the call is not valid JSON' }], text: '' };
    }
  }
  return { calls: [], text };
}
