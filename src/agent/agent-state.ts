/** Where an agent is in its turn cycle: Idle → Running ⇄ Paused → Idle; Destroyed is final. */
export type AgentState = 'Idle' | 'Running' | 'Paused' | 'Destroyed';
