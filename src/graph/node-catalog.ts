import type { NodeDefinition } from './node-definition.js';
import { cannedResponseNode } from './nodes/canned-response-node.js';
import { classifyAttributesNode } from './nodes/classify-attributes-node.js';
import { classifyIntentNode } from './nodes/classify-intent-node.js';
import { classifyIntentEmbeddingNode } from './nodes/classify-intent-embedding-node.js';
import { retrieveNode } from './nodes/retrieve-node.js';
import { generateNode } from './nodes/generate-node.js';
import { generateAndSpeakNode } from './nodes/generate-and-speak-node.js';
import { guardrailNode } from './nodes/guardrail-node.js';
import { instructionNode } from './nodes/instruction-node.js';
import { intentToInstructionNode } from './nodes/intent-to-instruction-node.js';
import { pauseNode } from './nodes/pause-node.js';
import { speakNode } from './nodes/speak-node.js';
import { summarizeNode } from './nodes/summarize-node.js';
import { toolCallNode } from './nodes/tool-call-node.js';

/**
 * Every node type a graph may use, by type name. A new node type is one file
 * under nodes/ exporting a NodeDefinition, added to this list.
 */
export const nodeCatalog: ReadonlyMap<string, NodeDefinition> = new Map(
  [
    generateNode,
    toolCallNode,
    summarizeNode,
    instructionNode,
    intentToInstructionNode,
    classifyIntentNode,
    classifyIntentEmbeddingNode,
    retrieveNode,
    classifyAttributesNode,
    pauseNode,
    cannedResponseNode,
    guardrailNode,
    generateAndSpeakNode,
    speakNode,
  ].map((definition) => [definition.type, definition]),
);
