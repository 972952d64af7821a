/**
 * The test side of register-apply-compare: how a client folds each event type into its
 * registered state. Areas add appliers in test/helpers/appliers/<area>.ts and import them from
 * test/helpers/appliers/index.ts.
 */
import { appliers, type ApplyContext, type State } from './appliers/registry.js';
import './appliers/users.js';
import './appliers/index.js';

export function applyEvent(state: State, event: Record<string, any>, ctx: ApplyContext): void {
  const applier = appliers.get(event.type);
  if (!applier) throw new Error(`no test applier for event type ${event.type}${event.op ? ` op ${event.op}` : ''}`);
  applier(state, event, ctx);
}
