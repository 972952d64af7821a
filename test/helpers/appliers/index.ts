// Each area's appliers; importing a file registers them.
import './drafts.js';
import './channels.js';
import './linkifiers.js';
import './user-groups.js';
import './attachments.js';
import './settings.js';
import './messages.js';
import './realm-emoji.js';
import './scheduled-messages.js';
import './muted-users.js';
import './profile-fields.js';
import './invites.js';
import './presence.js';
import './realm-admin.js';
import './onboarding-steps.js';
import './submessages.js';
export {};
