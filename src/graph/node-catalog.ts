import type { NodeDefinition } from './node-definition.js';
import { cannedResponseNode } from './nodes/canned-response-node.js';
import { generateNode } from './nodes/generate-node.js';
import { guardrailNode } from './nodes/guardrail-node.js';
import { instructionNode } from './nodes/instruction-node.js';
import { pauseNode } from './nodes/pause-node.js';

/** Every node type a graph may use, by type name. New node types are added here. */
export const nodeCatalog: ReadonlyMap<string, NodeDefinition> = new Map(
  [generateNode, cannedResponseNode, guardrailNode, instructionNode, pauseNode].map((definition) => [definition.type, definition]),
);
