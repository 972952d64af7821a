import type { DraftEvent } from './drafts/events.js';
import type { AttachmentEvent } from './attachments/events.js';
import type { PushEvent } from './push/events.js';
import type { UserGroupEvent } from './user-groups/events.js';
import type { LinkifierEvent } from './linkifiers/events.js';
import type { PlaygroundEvent } from './playgrounds/events.js';
import type { RealmEvent } from './realm/events.js';
import type { UserEvent } from './users/events.js';
import type { QueueEvent } from './queues/events.js';
import type { ChannelEvent } from './channels/events.js';
import type { MessageEvent } from './messages/events.js';
import type { SettingsEvent } from './settings/events.js';
import type { AlertWordsEvent } from './alert-words/events.js';
import type { TypingEvent } from './typing/events.js';
import type { RealmEmojiEvent } from './realm-emoji/events.js';
import type { ScheduledMessageEvent } from './scheduled-messages/events.js';
import type { MutedUsersEvent } from './muted-users/events.js';
import type { ProfileFieldEvent } from './profile-fields/events.js';
import type { InviteEvent } from './invites/events.js';
import type { PresenceEvent } from './presence/events.js';
import type { UserStatusEvent } from './user-status/events.js';
import type { ForgettingEvent } from './forgetting/events.js';
import type { BotStorageEvent } from './bot-storage/events.js';
import type { TutorialEvent } from './tutorial/events.js';
import type { RealmAdminEvent } from './realm-admin/events.js';
import type { OnboardingEvent } from './onboarding/events.js';
import type { RealmDeactivationEvent } from './realm-deactivation/events.js';
import type { SubmessageEvent } from './submessages/events.js';
import type { RealmExportEvent } from './realm-exports/events.js';
import type { OutgoingWebhookEvent } from './outgoing-webhooks/events.js';

/** The one union of every domain event. Each area adds its union here. */
export type DomainEvent =
  | RealmEvent
  | UserEvent
  | QueueEvent
  | ChannelEvent
  | MessageEvent
  | DraftEvent
  | LinkifierEvent
  | PlaygroundEvent
  | SettingsEvent
  | AlertWordsEvent
  | TypingEvent
  | UserGroupEvent
  | PushEvent
  | AttachmentEvent
  | RealmEmojiEvent
  | ScheduledMessageEvent
  | MutedUsersEvent
  | ProfileFieldEvent
  | InviteEvent
  | PresenceEvent
  | UserStatusEvent
  | ForgettingEvent
  | BotStorageEvent
  | RealmAdminEvent
  | TutorialEvent
  | OnboardingEvent
  | RealmDeactivationEvent
  | SubmessageEvent
  | RealmExportEvent
  | OutgoingWebhookEvent;
export type DomainEventType = DomainEvent['type'];
export type EventOf<T extends DomainEventType> = Extract<DomainEvent, { type: T }>;
export type DataOf<T extends DomainEventType> = EventOf<T>['data'];
