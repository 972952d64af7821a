import type { Projection } from '../src/projections-api.js';
import { realmsProjection } from './realms.js';
import { usersProjection } from './users.js';
import { userGroupsProjection } from './user-groups.js';
import { eventQueuesProjection } from './event-queues.js';
import { channelsProjection } from './channels.js';

/** Every projection, in the order they apply each event (a later one may read an earlier one's rows). */
export const allProjections: readonly Projection[] = [
  realmsProjection,
  usersProjection,
  userGroupsProjection,
  eventQueuesProjection,
  channelsProjection,
];
