export type State = Record<string, any>;
export type Applier = (state: State, event: Record<string, any>, ctx: ApplyContext) => void;

export const appliers = new Map<string, Applier>();

export function registerApplier(type: string, applier: Applier): void {
  appliers.set(type, applier);
}

export interface ApplyContext {
  userId: number;
  /** The registration asked for client_gravatar. */
  clientGravatar?: boolean;
  /** The registration asked for subscriber lists (include_subscribers). */
  includeSubscribers?: boolean;
}
