import type { Session } from '../../agent/session.js';
import type { ToolCallEvent } from '../../agent/turn-events.js';
import type { QualityEngineSettings, QualityProgress } from './quality-settings.js';
import { runQualityTurn } from './quality-turn.js';
import { QUALITY_TOOLS, TOOL_LINES, TOOL_SET_VERSION, TOOL_ROUTER_CHOICES, TOOL_SYSTEM_PROMPT, type QualityTool, type ToolLine } from '../quality-data/tool-lines-v1.js';

/** One ToolCall configuration the tools set compares. */
export interface ToolCallMode {
  name: string;
  constrained: boolean;
  toolChoice: 'auto' | 'required';
  /**
   * Route first: a ClassifyIntentLLM node (label words, calibrated) picks one tool or "none", and only the picked
   * tool's ToolCall node writes the call (tool required, under its grammar). One node, one decision: the model is
   * asked which tool in words it can score, instead of choosing a name inside a JSON object.
   */
  routed?: boolean;
  /** The router's calibration lines (ClassifyIntentLLM `calibrationLines`; routed modes only). */
  routerCalibration?: 'contentFree' | 'examples';
}

export const TOOL_CALL_MODES: readonly ToolCallMode[] = [
  { name: 'grammar, tool optional', constrained: true, toolChoice: 'auto' },
  { name: 'grammar, tool required', constrained: true, toolChoice: 'required' },
  { name: 'no grammar', constrained: false, toolChoice: 'auto' },
  { name: 'intent router + grammar', constrained: true, toolChoice: 'required', routed: true, routerCalibration: 'contentFree' },
  { name: 'intent router (calibrated on examples) + grammar', constrained: true, toolChoice: 'required', routed: true, routerCalibration: 'examples' },
];

export interface ToolModeResult {
  mode: string;
  /** Whether the calls were sampled under the tools' grammar. */
  constrained: boolean;
  lines: number;
  /** Lines on which the model wrote at least one call (valid or not). */
  linesWithCalls: number;
  calls: number;
  /** Calls that parsed and passed the tool's JSON schema, over all calls (1 when there were none to fail). */
  schemaValidShare: number;
  /** Lines answered right: the expected tool called (first valid call), or no valid call when none was expected. */
  rightShare: number;
  /** Of the lines that expect a tool, the share where it was called. */
  rightToolShare: number;
  /** Of the lines that expect none, the share left without a call. */
  rightNoToolShare: number;
  meanMs: number;
}

export interface ToolSetResult {
  set: 'tools';
  version: string;
  tools: number;
  lines: number;
  modes: ToolModeResult[];
}

/**
 * Runs every line through one ToolCall node per mode (no history, so lines are independent) and checks each call
 * the node reports against the line's expected tool. The node's own schema check decides validity; the real-model
 * tests check the same calls with an independent validator (ajv).
 */
export async function runToolSet(
  session: Session,
  settings: QualityEngineSettings,
  progress: QualityProgress,
  lines: readonly ToolLine[] = TOOL_LINES,
  chosen: readonly ToolCallMode[] = TOOL_CALL_MODES,
): Promise<ToolSetResult> {
  const modes: ToolModeResult[] = [];
  for (const mode of chosen) {
    const agent = await session.createAgent({
      graph: mode.routed ? routedGraph(settings, mode.routerCalibration ?? 'contentFree') : toolCallGraph(mode, settings),
      defaultModel: settings.modelPath,
      maintainDialogueHistory: false,
      engine: { threads: settings.threads },
    });
    let linesWithCalls = 0;
    let calls = 0;
    let valid = 0;
    let right = 0;
    let rightTool = 0;
    let rightNoTool = 0;
    let totalMs = 0;
    for (const [index, line] of lines.entries()) {
      const turn = await runQualityTurn(agent, line.line, `tools (${mode.name})`);
      const made = turn.events.filter((event): event is ToolCallEvent => event.type === 'toolCall');
      const firstValid = made.find((call) => call.valid);
      calls += made.length;
      valid += made.filter((call) => call.valid).length;
      if (made.length > 0) linesWithCalls += 1;
      const correct = line.tool === null ? firstValid === undefined : firstValid?.name === line.tool;
      if (correct) right += 1;
      if (correct && line.tool !== null) rightTool += 1;
      if (correct && line.tool === null) rightNoTool += 1;
      totalMs += turn.ms;
      progress(`tools: ${mode.name} ${index + 1}/${lines.length}`);
    }
    await session.destroyAgent(agent.id);
    const expectingTool = lines.filter((line) => line.tool !== null).length;
    modes.push({
      mode: mode.name,
      constrained: mode.constrained,
      lines: lines.length,
      linesWithCalls,
      calls,
      schemaValidShare: calls === 0 ? 1 : valid / calls,
      rightShare: right / lines.length,
      rightToolShare: expectingTool === 0 ? 0 : rightTool / expectingTool,
      rightNoToolShare: lines.length === expectingTool ? 0 : rightNoTool / (lines.length - expectingTool),
      meanMs: totalMs / lines.length,
    });
  }
  return { set: 'tools', version: TOOL_SET_VERSION, tools: QUALITY_TOOLS.length, lines: lines.length, modes };
}

/** One ToolCall node offering every tool. */
function toolCallGraph(mode: ToolCallMode, settings: QualityEngineSettings) {
  return { start: 'tools', nodes: [toolCallNode('tools', QUALITY_TOOLS, mode, settings)] };
}

/** A router naming one tool or none, then one ToolCall node per tool, each offering only its own tool. */
function routedGraph(settings: QualityEngineSettings, calibrationLines: 'contentFree' | 'examples') {
  const route = {
    name: 'route',
    type: 'ClassifyIntentLLM',
    params: {
      systemPrompt: TOOL_SYSTEM_PROMPT,
      intents: TOOL_ROUTER_CHOICES.map((choice) => ({ id: choice.id, description: choice.description, examples: [...choice.examples] })),
      method: 'labelWords',
      calibrate: true,
      calibrationLines,
      contextSize: settings.contextSize,
    },
    exits: {
      found: null,
      notFound: null,
      ...Object.fromEntries(TOOL_ROUTER_CHOICES.map((choice) => [choice.id, choice.tool === null ? null : `call_${choice.tool}`])),
    },
  };
  const calls = QUALITY_TOOLS.map((tool) => toolCallNode(`call_${tool.name}`, [tool], { constrained: true, toolChoice: 'required' }, settings));
  return { start: 'route', nodes: [route, ...calls] };
}

function toolCallNode(name: string, tools: readonly QualityTool[], mode: Pick<ToolCallMode, 'constrained' | 'toolChoice'>, settings: QualityEngineSettings) {
  return {
    name,
    type: 'ToolCall',
    params: {
      systemPrompt: TOOL_SYSTEM_PROMPT,
      tools: tools.map((tool) => ({ ...tool })),
      // The grammar writes the bare JSON the tool instructions ask for; free text may take any known form.
      format: mode.constrained ? 'json' : 'auto',
      constrained: mode.constrained,
      toolChoice: mode.toolChoice,
      contextSize: settings.contextSize,
      maxTokens: 64,
      temperature: 0,
    },
    exits: { toolCalled: null, noToolCalled: null },
  };
}

