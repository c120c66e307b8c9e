import { z } from 'zod';

/** Name of a node: what exits point at. */
export const nodeNameSchema = z
  .string()
  .min(1, 'node name must not be empty')
  .max(128, 'node name must be at most 128 characters');

/** One node of a graph as the user writes it. `params` are checked later against the node type's own schema. */
export const graphNodeSchema = z.strictObject({
  name: nodeNameSchema,
  type: z.string().min(1, 'node type must not be empty'),
  params: z.record(z.string(), z.unknown()).default({}),
  /** exitName → target node name, or null to end the turn. Exits left out end the turn. */
  exits: z.record(z.string(), nodeNameSchema.nullable()).default({}),
});

/** A workflow graph: `{ start, nodes: [{ name, type, params, exits }] }` (SPEC §5.1). */
export const graphSchema = z.strictObject({
  start: nodeNameSchema,
  nodes: z.array(graphNodeSchema).min(1, 'a graph needs at least one node').max(1024, 'a graph has at most 1024 nodes'),
});

/** A graph as written (before defaults). */
export type GraphJson = z.input<typeof graphSchema>;
export type GraphNodeJson = z.input<typeof graphNodeSchema>;
