export type State = Record<string, any>;
export type Applier = (state: State, event: Record<string, any>, ctx: { userId: number }) => void;

export const appliers = new Map<string, Applier>();

export function registerApplier(type: string, applier: Applier): void {
  appliers.set(type, applier);
}
