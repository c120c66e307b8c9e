// Inputs the fuzz tier (test/fuzz) found reaching the TypeScript surface untyped, one regression case each: every one
// is now a LlamaDialogError, and a refused call leaves the object as it was.
import { describe, expect, it } from 'vitest';
import { Dialog } from '../../../src/dialog/dialog.js';
import { LlamaDialogError } from '../../../src/errors.js';
import { refusal } from '../../kits/refusal.js';

function dialogWithTurn(): Dialog {
  const dialog = new Dialog({ clock: () => 7 });
  dialog.beginTurn('Hello.');
  return dialog;
}

describe('Dialog refuses what a snapshot could not hold', () => {
  it('non-object items, unknown statuses, over-long slot names: InvalidArgument, dialog unchanged', () => {
    const dialog = dialogWithTurn();
    const before = structuredClone(dialog.interactions);
    expect(refusal(() => dialog.addToolCall(0.5 as never))).toBe('InvalidArgument');
    expect(refusal(() => dialog.addToolCall({ node: undefined, name: 'x' } as never))).toBe('InvalidArgument');
    expect(refusal(() => dialog.addKnowledge(null as never))).toBe('InvalidArgument');
    expect(refusal(() => dialog.addReply({ node: 'a', text: 'b', historyRole: 'User' } as never))).toBe('InvalidArgument');
    expect(refusal(() => dialog.setSlot('s'.repeat(1025), 'v'))).toBe('InvalidArgument');
    const call = dialog.addToolCall({ node: 'tools', name: 'look' });
    expect(refusal(() => dialog.completeToolCall(call.id, 'ok', 4765 as never))).toBe('InvalidArgument');
    expect(refusal(() => dialog.completeToolCall(Symbol('id') as never, 'ok'))).toBe('InvalidArgument');
    expect(dialog.interactions[0]!.toolCalls).toHaveLength(1);
    expect({ ...dialog.interactions[0]!, toolCalls: [] }).toEqual({ ...before[0]!, toolCalls: [] });
    // What was accepted imports back.
    dialog.endTurn();
    expect(Dialog.fromSnapshot(JSON.parse(JSON.stringify(dialog.toSnapshot()))).dialog.interactions).toEqual(dialog.interactions);
  });

  it('odd options and indexes: null options, string slots, a clock that is not a function, an object reply index', () => {
    expect(refusal(() => new Dialog(null as never))).toBe('InvalidArgument');
    expect(refusal(() => new Dialog({ clock: 5 as never }))).toBe('InvalidArgument');
    expect(refusal(() => new Dialog({ limits: { maxSlotChars: Object.create(null) } }))).toBe('InvalidArgument');
    const dialog = new Dialog({ clock: () => 7 });
    expect(refusal(() => dialog.beginTurn('Hi', null as never))).toBe('InvalidArgument');
    expect(refusal(() => dialog.beginTurn('Hi', { slots: 'ab' as never }))).toBe('InvalidArgument');
    expect(dialog.length).toBe(0);
    dialog.beginTurn('Hi');
    dialog.addReply({ node: 'a', text: 'b' });
    expect(refusal(() => dialog.editReplyText(0, Object.create(null) as never, 'x'))).toBe('InvalidArgument');
    expect(refusal(() => dialog.editReplyText(0, 'length' as never, 'x'))).toBe('InvalidArgument');
    expect(refusal(() => dialog.editUserLine(Symbol('t') as never, 'x'))).toBe('InvalidArgument');
    expect(dialog.interactions[0]!.replies[0]!.text).toBe('b');
  });
});
