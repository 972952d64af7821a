import type { Projection } from '../src/projections-api.js';
import { draftsProjection } from './drafts.js';
import { linkifiersProjection } from './linkifiers.js';
import { playgroundsProjection } from './playgrounds.js';
import { pushDevicesProjection } from './push-devices.js';
import { attachmentsProjection } from './attachments.js';
import { realmsProjection } from './realms.js';
import { usersProjection } from './users.js';
import { userGroupsProjection } from './user-groups.js';
import { eventQueuesProjection } from './event-queues.js';
import { channelsProjection } from './channels.js';
import { messagesProjection } from './messages.js';
import { alertWordsProjection } from './alert-words.js';
import { realmEmojiProjection } from './realm-emoji.js';
import { scheduledMessagesProjection } from './scheduled-messages.js';
import { mutedUsersProjection } from './muted-users.js';
import { invitesProjection } from './invites.js';
import { userPresenceProjection, userStatusProjection } from './presence.js';
import { forgettingProjection } from './forgetting.js';
import { botStorageProjection } from './bot-storage.js';
import { tutorialStatusProjection } from './tutorial-status.js';
import { realmAdminProjection } from './realm-admin.js';
import { onboardingStepsProjection } from './onboarding-steps.js';
import { submessagesProjection } from './submessages.js';
import { realmExportsProjection } from './realm-exports.js';
import { botServicesProjection } from './bot-services.js';
import { outgoingWebhookJobsProjection } from './outgoing-webhook-jobs.js';

/** Every projection, in the order they apply each event (a later one may read an earlier one's rows). */
export const allProjections: readonly Projection[] = [
  realmsProjection,
  usersProjection,
  userGroupsProjection,
  eventQueuesProjection,
  channelsProjection,
  messagesProjection,
  draftsProjection,
  linkifiersProjection,
  playgroundsProjection,
  alertWordsProjection,
  pushDevicesProjection,
  attachmentsProjection,
  realmEmojiProjection,
  scheduledMessagesProjection,
  mutedUsersProjection,
  invitesProjection,
  userPresenceProjection,
  userStatusProjection,
  forgettingProjection,
  botStorageProjection,
  tutorialStatusProjection,
  realmAdminProjection,
  onboardingStepsProjection,
  submessagesProjection,
  realmExportsProjection,
  botServicesProjection,
  outgoingWebhookJobsProjection,
];
