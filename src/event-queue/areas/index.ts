// Each import registers an area's translators and /register sections.
import './realm.js';
import './users.js';
// Before channels: the deprecated muted_topics event precedes user_topic, as on the real server.
import './muted-topics.js';
import './channels.js';
import './subscriptions.js';
import './drafts.js';
import './linkifiers.js';
import './playgrounds.js';
import './user-groups.js';
// After users and user-groups: channels coming into or out of view follow the role's own events.
import './role-channel-access.js';
// Deactivation and reactivation, each in one place (the real server's order across users, groups, channels and bots).
import './account-lifecycle.js';
import './attachments.js';
import './settings.js';
import './alert-words.js';
import './typing.js';
import './messages.js';
import './realm-emoji.js';
import './scheduled-messages.js';
import './muted-users.js';
import './profile-fields.js';
import './invites.js';
import './presence.js';
import './realm-admin.js';
import './onboarding-steps.js';
import './realm-deactivation.js';
import './submessages.js';
import './realm-exports.js';
