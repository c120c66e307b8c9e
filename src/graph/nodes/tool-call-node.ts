import { z } from 'zod';
import type { ToolCallDisposition } from '../../dialog/interaction.js';
import { isLlamaDialogError, LlamaDialogError } from '../../errors.js';
import type { ToolDefinition } from '../../prompt/chat-message.js';
import { defineNode, type GraphNode, type NodePrefillContext } from '../node-definition.js';
import type { NodeRunContext } from '../node-run-context.js';
import { PauseTimedOutSignal } from '../pause-timed-out.js';
import { compileArgumentsCheck, schemaProblem, type ArgumentsCheck } from '../tools/tool-arguments-validator.js';
import { buildToolCallGrammar } from '../tools/tool-call-grammar.js';
import type { InferencePort } from '../inference-port.js';
import { parseToolCalls, type ParsedToolCall } from '../tools/tool-call-parser.js';
import type { NodePromptProjector } from '../../prompt/node-prompt-projector.js';
import { createNodeProjector, projectionSettingsFrom, type NodeProjectorShape } from '../inference/projected-prompt.js';
import { projectedStaticPrefix } from '../inference/static-prefix.js';
import { generateFromProjection } from '../inference/projected-generation.js';
import { inferenceParamsShape, inferenceStructuralParams, projectedPromptParamsShape, samplingFrom, samplingParamsShape, checkReplyFits } from '../inference/shared-params.js';
import { checkTemplate } from '../inference/template-check.js';

const toolSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/, 'tool names are 1–64 letters, digits, _ . - (not starting with a digit)'),
  description: z.string().max(4000).default(''),
  /** JSON schema of the arguments object. */
  parameters: z
    .record(z.string(), z.unknown())
    .refine((schema) => schema.type === undefined || schema.type === 'object', 'tool parameters must be a JSON schema of type "object"')
    .default({ type: 'object', properties: {} }),
});

const paramsSchema = z.strictObject({
  ...inferenceParamsShape,
  ...samplingParamsShape,
  ...projectedPromptParamsShape,
  tools: z.array(toolSchema).min(1, 'give at least one tool').max(128),
  /** Output format to parse; auto (default) accepts hermes `<tool_call>`, bare JSON and mistral `[TOOL_CALLS]`. */
  format: z.enum(['auto', 'hermes', 'json', 'mistral']).default('auto'),
  /**
   * Sample under a grammar built from the tools' schemas (llama.cpp's JSON-Schema converter), so the reply is one
   * well-formed, schema-valid call to one of the tools in `format`, or the "no tool" answer (see toolChoice). Every
   * format can be expressed, so this defaults to true for all of them.
   */
  constrained: z.boolean().default(true),
  /**
   * With `constrained`: `auto` (default) lets the model answer without a call (plain text that no format reads as a
   * call); `required` makes it call one of its tools. `required` needs `constrained`.
   */
  toolChoice: z.enum(['auto', 'required']).default('auto'),
  /** How recorded calls are kept in history and whether they pause the turn (SPEC §5.3). Default Omit. */
  disposition: z.enum(['Omit', 'Replay', 'Pause', 'PauseAndAcknowledge', 'AwaitResult']).default('Omit'),
  /** Pause timeout for pausing dispositions; 0 (default) = the runtime's toolCallPauseTimeoutMs (0 = forever). */
  pauseTimeoutMs: z.number().int().min(0).max(86_400_000).default(0),
  maxTokens: z.number().int().min(1).max(1 << 20).default(256),
  /** Tool results longer than this many tokens are clipped in prompts, with a visible mark. */
  toolResultTokenLimit: z.number().int().min(1).max(1 << 20).default(512),
  trimTargetRatio: z.number().gt(0).max(1).default(0.75),
});
type ToolCallParams = z.infer<typeof paramsSchema>;

const PAUSING: readonly ToolCallDisposition[] = ['Pause', 'PauseAndAcknowledge', 'AwaitResult'];

/** A resume payload as the text stored for a call (tool output or acknowledgement). */
function payloadText(payload: unknown, fallback: string): string {
  if (payload === undefined || payload === null) return fallback;
  return typeof payload === 'string' ? payload : JSON.stringify(payload);
}

interface CheckedCall {
  parsed: ParsedToolCall;
  error: string | undefined;
}

function checkCall(call: ParsedToolCall, checks: ReadonlyMap<string, ArgumentsCheck>): CheckedCall {
  if (call.problem) return { parsed: call, error: call.problem };
  const check = checks.get(call.name);
  if (!check) return { parsed: call, error: `unknown tool "${call.name}" (tools: ${[...checks.keys()].join(', ')})` };
  if (typeof call.arguments !== 'object' || call.arguments === null || Array.isArray(call.arguments)) {
    return { parsed: call, error: 'arguments must be a JSON object' };
  }
  return { parsed: call, error: check(call.arguments) };
}

class ToolCallNode implements GraphNode {
  readonly type = 'ToolCall';
  private projector: NodePromptProjector | undefined;
  // Tools, format, constrained and toolChoice are structural: the validators and the grammar are built once.
  private argumentChecks: ReadonlyMap<string, ArgumentsCheck> | undefined;
  private grammar: string | undefined;

  constructor(readonly name: string) {}

  async execute(run: NodeRunContext): Promise<string> {
    const params = run.params as ToolCallParams;
    const tools: ToolDefinition[] = params.tools.map((tool) => ({ ...tool }));
    const inference = run.inference();
    // Tools, sizes and history keeping are structural params: fixed when the projector is first built.
    this.projector ??= createNodeProjector(inference, this.shape(params, run.settings.maintainDialogueHistory));
    const projection = this.projector.project(run.dialog, { settings: projectionSettingsFrom(params), variables: run.variables.toObject() });
    this.argumentChecks ??= new Map(tools.map((tool) => [tool.name, compileArgumentsCheck(tool.parameters)]));
    if (params.constrained) this.grammar ??= this.buildGrammar(inference, params, tools);
    const result = await generateFromProjection(run, inference, projection, {
      maxTokens: params.maxTokens,
      sampling: samplingFrom(params),
      ...(params.constrained ? { grammar: this.grammar } : {}),
    });
    const parse = parseToolCalls(result.text, params.format);
    const argumentChecks = this.argumentChecks;
    const checked = parse.calls.map((call) => checkCall(call, argumentChecks));
    const recorded: { callId: string; call: CheckedCall }[] = [];
    for (const call of checked) {
      const record = run.dialog.addToolCall({
        node: this.name,
        name: call.parsed.name || '(unnamed)',
        arguments: call.parsed.argumentsJson.slice(0, run.dialog.limits.maxItemChars),
        disposition: params.disposition,
      });
      if (call.error) run.dialog.completeToolCall(record.id, null, 'Failed');
      else if (params.disposition === 'Omit') run.dialog.completeToolCall(record.id, null, 'Completed');
      recorded.push({ callId: record.id, call });
      run.emitToolCall({
        callId: record.id,
        name: record.name,
        arguments: call.parsed.arguments,
        argumentsJson: call.parsed.argumentsJson,
        valid: call.error === undefined,
        ...(call.error ? { error: call.error } : {}),
        disposition: params.disposition,
      });
      if (call.error) run.warn(`invalid tool call ${record.id} (${record.name}): ${call.error}`);
    }
    run.diagnostics.addData({
      toolCalls: recorded.map(({ callId, call }) => ({
        callId,
        name: call.parsed.name,
        arguments: call.parsed.argumentsJson,
        valid: call.error === undefined,
        ...(call.error ? { error: call.error } : {}),
      })),
      textOutsideCalls: parse.text,
    });
    const valid = recorded.filter(({ call }) => call.error === undefined);
    if (PAUSING.includes(params.disposition)) {
      for (const { callId, call } of valid) await this.pauseFor(run, params, callId, call.parsed);
    }
    return valid.length > 0 ? 'toolCalled' : 'noToolCalled';
  }

  /** The largest static prefix of any node: system prompt plus every tool definition. */
  async prefill({ params, inference, variables, maintainDialogueHistory }: NodePrefillContext): Promise<void> {
    const toolCall = params as ToolCallParams;
    const prefix = projectedStaticPrefix(inference, this.shape(toolCall, maintainDialogueHistory), toolCall, variables);
    if (prefix.length > 0) await inference.prefill(prefix);
  }

  private buildGrammar(inference: InferencePort, params: ToolCallParams, tools: readonly ToolDefinition[]): string {
    try {
      return buildToolCallGrammar(tools, params.format, params.toolChoice, (schema) => inference.jsonSchemaToGrammar(schema));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new LlamaDialogError(
        'InvalidArgument',
        `ToolCall node "${this.name}": llama.cpp cannot turn the tools' schemas into a grammar (${reason}); simplify the schemas or set constrained: false`,
        { cause: error },
      );
    }
  }

  private shape(params: ToolCallParams, maintainHistory: boolean): NodeProjectorShape {
    return {
      node: this.name,
      maxTokens: params.maxTokens,
      trimTargetRatio: params.trimTargetRatio,
      maintainHistory,
      tools: params.tools.map((tool) => ({ ...tool })),
    };
  }

  private async pauseFor(run: NodeRunContext, params: ToolCallParams, callId: string, call: ParsedToolCall): Promise<void> {
    const timeoutMs = params.pauseTimeoutMs > 0 ? params.pauseTimeoutMs : run.settings.toolCallPauseTimeoutMs;
    let outcome;
    try {
      outcome = await run.pause({
        reason: 'toolCall',
        timeoutMs,
        toolCall: { callId, name: call.name, arguments: call.arguments, disposition: params.disposition },
      });
    } catch (error) {
      if (isLlamaDialogError(error, 'Aborted')) run.dialog.completeToolCall(callId, null, 'Cancelled');
      throw error;
    }
    if (outcome.kind === 'timedOut') {
      run.dialog.completeToolCall(callId, null, 'TimedOut');
      throw new PauseTimedOutSignal(this.name);
    }
    const limit = run.dialog.limits.maxItemChars;
    const clipToDialog = (text: string): string =>
      text.length <= limit ? text : `${text.slice(0, limit - 64)}\n[… tool output truncated at ${limit - 64} characters]`;
    // A result submitted during the pause (submitToolResult) is the tool's answer: the resume never overwrites it.
    const submitted = run.turn.toolCalls.find((recorded) => recorded.id === callId);
    const kept = submitted?.status === 'Completed' && submitted.result !== null ? submitted.result : null;
    const hasPayload = outcome.payload !== undefined && outcome.payload !== null;
    if (kept !== null) {
      if (hasPayload && payloadText(outcome.payload, '') !== kept) {
        run.warn(`tool call ${callId}: the resume payload is ignored; the result submitted during the pause is kept`);
      }
    } else if (params.disposition === 'AwaitResult') {
      // Agent.resume refuses a missing payload when no result was submitted; '' only for an explicit empty result.
      run.dialog.completeToolCall(callId, clipToDialog(payloadText(outcome.payload, '')));
    } else if (params.disposition === 'PauseAndAcknowledge') {
      run.dialog.completeToolCall(callId, clipToDialog(payloadText(outcome.payload, 'acknowledged')));
    } else {
      run.dialog.completeToolCall(callId, null, 'Completed');
    }
  }
}

/**
 * Lets the model call one of its tools. By default (`constrained`) the reply is sampled under a grammar built from
 * the tools' schemas, so a call is always well-formed and schema-valid. Calls are parsed from the output, checked
 * against the tools' JSON schemas with ajv (invalid ones are recorded as Failed and reported, never dropped silently) and recorded with the node's
 * disposition; pausing dispositions suspend the turn until `agent.resume(payload)`.
 */
export const toolCallNode = defineNode({
  type: 'ToolCall',
  paramsSchema,
  exits: ['toolCalled', 'noToolCalled'],
  structuralParams: [...inferenceStructuralParams, 'tools', 'format', 'constrained', 'toolChoice'],
  usesModel: true,
  checkSizes: checkReplyFits,
  check(params) {
    const names = new Set<string>();
    for (const tool of params.tools) {
      if (names.has(tool.name)) return `duplicate tool name "${tool.name}"`;
      names.add(tool.name);
      const problem = schemaProblem(tool.parameters);
      if (problem) return `tool "${tool.name}": parameters are not a valid JSON Schema: ${problem}`;
    }
    if (params.toolChoice === 'required' && !params.constrained) {
      return 'toolChoice "required" needs constrained: true (only the grammar can make the model call a tool)';
    }
    return checkTemplate(params.template);
  },
  create: (node) => new ToolCallNode(node.name),
});

