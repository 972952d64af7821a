import { defineProjection } from './define.js';
import { jsonText } from '../src/eventstore/json-text.js';

export const eventQueuesProjection = defineProjection({
  name: 'event_queues',
  version: 1,
  tables: ['event_queues'],
  handlers: {
    QueueRegistered: async (trx, d, e) => {
      await trx
        .insertInto('event_queues')
        .values({
          id: d.queue_id,
          user_id: d.user_id,
          realm_id: d.realm_id,
          event_types: jsonText(d.event_types),
          narrow: jsonText(d.narrow),
          options: jsonText(d.options),
          registered_position: e.position,
          lifespan_secs: d.lifespan_secs,
          created_at: d.created_at,
        })
        .execute();
    },
    QueueDeleted: async (trx, d) => {
      await trx.deleteFrom('event_queues').where('id', '=', d.queue_id).execute();
    },
  },
});
