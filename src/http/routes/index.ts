import type { FastifyInstance } from 'fastify';
import type { AppServices } from '../services.js';
import draftRoutes from './drafts.js';
import channelRoutes from './channels.js';
import linkifierRoutes from './linkifiers.js';
import playgroundRoutes from './playgrounds.js';
import userGroupRoutes from './user-groups.js';
import pushRoutes from './push.js';
import attachmentRoutes from './attachments.js';
import settingsRoutes from './settings.js';
import alertWordRoutes from './alert-words.js';
import typingRoutes from './typing.js';
import messageRoutes from './messages.js';
import auditRoutes from './audit.js';
import realmEmojiRoutes from './realm-emoji.js';

/** Route plugins of the API areas beyond users and events; each area adds its plugin here. */
export const areaRoutes: Array<(app: FastifyInstance, opts: { services: AppServices }) => Promise<void>> = [];
areaRoutes.push(draftRoutes);
areaRoutes.push(channelRoutes);
areaRoutes.push(linkifierRoutes, playgroundRoutes);
areaRoutes.push(userGroupRoutes);
areaRoutes.push(pushRoutes);
areaRoutes.push(attachmentRoutes);
areaRoutes.push(settingsRoutes, alertWordRoutes, typingRoutes);
areaRoutes.push(messageRoutes);
areaRoutes.push(auditRoutes);
areaRoutes.push(realmEmojiRoutes);
