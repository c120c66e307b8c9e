import type { ToolDefinition } from '../../prompt/chat-message.js';
import type { ToolCallFormat } from './tool-call-parser.js';

/** Whether a constrained ToolCall node may answer without a call (`auto`) or must call one of its tools (`required`). */
export type ToolChoice = 'auto' | 'required';

/** llama.cpp's JSON-Schema → GBNF converter (root rule `root`), as the inference port offers it. */
export type JsonSchemaToGrammar = (schema: object) => string;

/**
 * The GBNF grammar a constrained ToolCall node samples under. It admits exactly one well-formed call to one of
 * `tools` — `{"name": <tool>, "arguments": <object matching that tool's parameters>}`, written the way `format`
 * expects it — or, with `choice` `auto`, the node's "no tool" answer: plain text that starts with a character other
 * than whitespace, `{`, `[` or `<` and never contains `<t` or `[T`, so that no parser format can read a call into it.
 *
 * Every format is expressible: `json` is the bare call (what the built-in chat templates ask for), `hermes` wraps
 * it in `<tool_call>…</tool_call>`, `mistral` writes `[TOOL_CALLS][…]`, and `auto` allows any of the three.
 *
 * One schema covers all tools (an `anyOf` of one call object per tool, each tool's schema under `$defs` with its
 * local `$ref`s re-pointed there), so llama.cpp's converter runs once per node and names its rules without clashes.
 * @throws whatever `convert` throws for a schema it cannot express (remote `$ref`s, for one).
 */
export function buildToolCallGrammar(
  tools: readonly ToolDefinition[],
  format: ToolCallFormat,
  choice: ToolChoice,
  convert: JsonSchemaToGrammar,
): string {
  const defs: Record<string, unknown> = {};
  const calls = tools.map((tool, index) => {
    const key = `tool${index}`;
    defs[key] = repointLocalRefs(tool.parameters, `#/$defs/${key}`);
    return {
      type: 'object',
      properties: { name: { const: tool.name }, arguments: { $ref: `#/$defs/${key}` } },
      required: ['name', 'arguments'],
      additionalProperties: false,
    };
  });
  const callSchema = calls.length === 1 ? { $defs: defs, ...calls[0] } : { $defs: defs, anyOf: calls };
  const converted = convert(callSchema);
  const prefix = unusedRulePrefix(converted);
  const call = `${prefix}call`;
  const rules = renameRootRule(converted, call).map((rule) => (rule.startsWith('space ::= ') ? COMPACT_SPACE_RULE : rule));

  const forms: Record<Exclude<ToolCallFormat, 'auto'>, string> = {
    json: call,
    hermes: `"<tool_call>" "\\n"? ${call} "\\n"? "</tool_call>"`,
    mistral: `"[TOOL_CALLS]" " "? "[" ${call} "]"`,
  };
  const callForm = format === 'auto' ? `${forms.json} | ${forms.hermes} | ${forms.mistral}` : forms[format];
  const lines = [`root ::= ${choice === 'auto' ? `(${callForm}) | ${prefix}no-tool` : callForm}`, ...rules];
  if (choice === 'auto') {
    lines.push(
      `${prefix}no-tool ::= [^{\\[<\\x00-\\x20] ${prefix}text-char* ("<"+ | "\\["+)?`,
      // `<` and `[` only ever come before a character that cannot start `tool_call>` or `TOOL_CALLS]`.
      `${prefix}text-char ::= [^<\\[] | "<"+ [^t<\\[] | "\\["+ [^T<\\[]`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Whitespace between JSON tokens: at most one space. llama.cpp's converter allows up to two newlines and twenty
 * spaces or tabs at every separator; a small real model (SmolLM2-135M) fills them greedily and runs out of
 * maxTokens before the call closes (7 of 10 calls cut off at 64 tokens in test/real/smollm2-nodes.test.ts).
 */
const COMPACT_SPACE_RULE = 'space ::= " "?';

/** A copy of `schema` whose document-local `$ref`s (`#…`) point into `base`, where the schema will live. */
function repointLocalRefs(schema: unknown, base: string): unknown {
  if (Array.isArray(schema)) return schema.map((item) => repointLocalRefs(item, base));
  if (typeof schema !== 'object' || schema === null) return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    const localRef = key === '$ref' && typeof value === 'string' && value.startsWith('#');
    copy[key] = localRef ? `${base}${value.slice(1)}` : repointLocalRefs(value, base);
  }
  return copy;
}

/** A rule-name prefix no converter rule starts with, so the rules added here never clash with the converter's. */
function unusedRulePrefix(grammar: string): string {
  const names = [...grammar.matchAll(/^([A-Za-z0-9-]+) ::=/gm)].map((match) => match[1] as string);
  let prefix = 'toolcall-';
  for (let n = 2; names.some((name) => name.startsWith(prefix)); n += 1) prefix = `toolcall${n}-`;
  return prefix;
}

/**
 * Renames the converter's start rule: its references are whole rule names outside string literals (`"…"`) and
 * character classes (`[…]`), which may themselves contain the letters `root`.
 */
function renameRootRule(grammar: string, name: string): string[] {
  return grammar
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const separator = line.indexOf(' ::= ');
      if (separator < 0) return line; // a comment
      const head = line.slice(0, separator);
      return `${head === 'root' ? name : head} ::= ${renameReferences(line.slice(separator + 5), 'root', name)}`;
    });
}

function renameReferences(body: string, from: string, to: string): string {
  let out = '';
  let i = 0;
  while (i < body.length) {
    const ch = body[i] as string;
    if (ch === '"' || ch === '[') {
      const close = ch === '"' ? '"' : ']';
      let j = i + 1;
      while (j < body.length && body[j] !== close) j += body[j] === '\\' ? 2 : 1;
      out += body.slice(i, j + 1);
      i = j + 1;
    } else if (/[A-Za-z0-9-]/.test(ch)) {
      let j = i;
      while (j < body.length && /[A-Za-z0-9-]/.test(body[j] as string)) j += 1;
      const word = body.slice(i, j);
      out += word === from ? to : word;
      i = j;
    } else {
      out += ch;
      i += 1;
    }
  }
  return out;
}
