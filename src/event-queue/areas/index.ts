// Each import registers an area's translators and /register sections.
import './realm.js';
import './users.js';
import './channels.js';
import './drafts.js';
import './linkifiers.js';
import './playgrounds.js';
import './user-groups.js';
import './attachments.js';
import './settings.js';
import './alert-words.js';
import './typing.js';
import './messages.js';
import './realm-emoji.js';
import './muted-topics.js';
