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
  /** The registration declared the user_list_incomplete capability. */
  userListIncomplete?: boolean;
  /** The organization's host, as the placeholder of a user one may not access names it. */
  realmHost?: string;
  /**
   * What the server would answer now, for the few values the real server's own apply_event reads
   * back from its database instead of getting events for them (realm_bots and realm_default_streams
   * when the client's own role crosses the administrator or guest line).
   */
  server?: State;
}
