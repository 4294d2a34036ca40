/**
 * A tiny given / when / then for deciders, in the spirit of emmett's DeciderSpecification:
 *   given(events).when(observation).then(expectedEvents)
 *   given(events).when(observation).thenSkips(/unchanged/)
 *   given(events).when(observation).thenRejects(/data.title/)
 */
import assert from 'node:assert/strict';
import { validateObservation } from '../../contracts/codec.ts';
import type { DomainEvent } from '../../contracts/events.ts';
import type { Observation } from '../../contracts/observations.ts';
import type { Decider, Decision } from '../../services/ingest/decision.ts';

export interface Then {
  readonly decision: Decision;
  /** Asserts an append of exactly these events (and, when given, to this stream). */
  then(expected: DomainEvent[], stream?: string): void;
  thenSkips(reason?: RegExp): void;
  thenRejects(reason: RegExp): void;
}

function describeDecision(d: Decision): string {
  return d.kind === 'append' ? `append of ${d.events.map((e) => e.type).join(', ')}` : `${d.kind}: ${d.reason}`;
}

export function specificationFor<S, O extends Observation>(decider: Decider<S, O>) {
  return function given(events: DomainEvent[]) {
    return {
      /** `observation` is `unknown` so invalid shapes can be fed in. */
      when(observation: O | Record<string, unknown>): Then {
        const state = events.reduce((s, e) => decider.evolve(s, e), decider.initialState());
        const decision = decider.decide(state, observation as O);
        return {
          decision,
          then(expected, stream) {
            assert.equal(decision.kind, 'append', `expected an append, got ${describeDecision(decision)}`);
            if (decision.kind !== 'append') return;
            assert.deepEqual(decision.events, expected);
            if (stream !== undefined) assert.equal(decision.stream, stream);
          },
          thenSkips(reason) {
            assert.equal(decision.kind, 'skip', `expected a skip, got ${describeDecision(decision)}`);
            if (decision.kind === 'skip' && reason !== undefined) assert.match(decision.reason, reason);
          },
          thenRejects(reason) {
            assert.equal(decision.kind, 'reject', `expected a reject, got ${describeDecision(decision)}`);
            if (decision.kind === 'reject') assert.match(decision.reason, reason);
          },
        };
      },
    };
  };
}

/**
 * Asserts that validation refuses an observation, naming the field: such an observation never
 * reaches a decider (the bus checks its schema and the domain rules once, when it decodes it).
 */
export function refused(observation: unknown, reason: RegExp): void {
  const found = validateObservation(observation);
  assert.ok(found !== null, 'expected validation to refuse the observation');
  assert.match(found, reason);
}
