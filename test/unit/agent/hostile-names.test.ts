// Inputs the fuzz tier (test/fuzz) found reaching the TypeScript surface untyped, one regression case each: every one
// is now a LlamaDialogError, and a refused call leaves the object as it was.
import { describe, expect, it } from 'vitest';
import { Session } from '../../../src/agent/session.js';
import { LlamaDialogError } from '../../../src/errors.js';
import { createHarness, echoGraph } from '../../kits/session-kit.js';
import { refusal } from '../../kits/refusal.js';

describe('Session and Agent refuse odd names without a TypeError', () => {
  it('host options, variable and node names, param names, turns, edits and sendMessage options', async () => {
    expect(refusal(() => new Session(null as never))).toBe('InvalidArgument');
    const { session } = createHarness();
    const agent = await session.createAgent({ graph: echoGraph(), defaultModel: 'm1', variables: { gold: 3 } });
    const params = agent.getParams('echo');
    expect(refusal(() => agent.changeParam(Symbol('n') as never, 'x', 1))).toBe('UnknownNode');
    expect(refusal(() => agent.changeParam('echo', Symbol('p') as never, 1))).toBe('InvalidParamValue');
    expect(refusal(() => agent.getParams(Symbol('n') as never))).toBe('UnknownNode');
    expect(refusal(() => agent.setVariable({ [Symbol.toPrimitive]: null } as never, 1))).toBe('InvalidParamValue');
    expect(refusal(() => agent.editTurn(Symbol('t') as never, {}))).toBe('InvalidArgument');
    expect(refusal(() => agent.sendMessage('Hi', null as never))).toBe('InvalidArgument');
    expect(agent.state).toBe('Idle');
    expect(agent.getParams('echo')).toEqual(params);
    expect(agent.variables).toEqual({ gold: 3 });
    await session.close();
  });
});
