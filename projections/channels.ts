import { runPrepared } from '../src/db/prepared.js';
import { defineProjection } from './define.js';
import { firstMessageKey, firstMessageKnownAtMost, foldFirstMessageIds, rememberFirstMessageAtMost } from './messages-bulk.js';
import { streamRowFromCreated } from '../src/read/channels.js';
import { SHREDDED } from '../src/eventstore/crypto/envelope.js';

export const channelsProjection = defineProjection({
  name: 'channels',
  version: 5,
  tables: ['streams', 'subscriptions', 'user_topics'],
  bulk: { MessageSent: foldFirstMessageIds },
  handlers: {
    // A channel's first message id is set by its first message (deletions move it on).
    MessageSent: async (trx, d, _e, memory) => {
      if (d.stream_id === null || firstMessageKnownAtMost(memory, d.stream_id, d.message_id)) return 'unchanged';
      const result = await trx
        .updateTable('streams')
        .set({ first_message_id: d.message_id })
        .where('id', '=', d.stream_id)
        .where((eb) => eb.or([eb('first_message_id', 'is', null), eb('first_message_id', '>', d.message_id)]))
        .executeTakeFirst();
      rememberFirstMessageAtMost(memory, d.stream_id, d.message_id);
      return result.numUpdatedRows > 0n ? undefined : 'unchanged';
    },
    StreamCreated: async (trx, d, e) => {
      await trx
        .insertInto('streams')
        .values(streamRowFromCreated(d, e.stream_version))
        .execute();
    },
    StreamPropertyChanged: async (trx, d, e, memory) => {
      // A deletion moves the first message id on, or to none: the next send may set it again.
      if (d.property === 'first_message_id') memory.delete(firstMessageKey(d.stream_id));
      const set: Record<string, unknown> = { [d.property]: d.value, version: e.stream_version };
      if (d.property === 'description' && d.extra?.rendered_description !== undefined) {
        set.rendered_description = d.extra.rendered_description;
      }
      await trx.updateTable('streams').set(set).where('id', '=', d.stream_id).execute();
    },
    StreamArchived: async (trx, d, e) => {
      await trx.updateTable('streams').set({ deactivated: true, is_default: false, version: e.stream_version }).where('id', '=', d.stream_id).execute();
      await trx.updateTable('subscriptions').set({ active: false }).where('stream_id', '=', d.stream_id).execute();
    },
    UserSubscribed: async (trx, d, e) => {
      await runPrepared(trx, trx
        .insertInto('subscriptions')
        .values({
          user_id: d.user_id,
          stream_id: d.stream_id,
          active: true,
          color: d.color,
          is_muted: false,
          pin_to_top: false,
          desktop_notifications: null,
          email_notifications: null,
          push_notifications: null,
          audible_notifications: null,
          wildcard_mentions_notify: null,
          version: e.stream_version,
        })
        // A returning subscriber keeps the colour and settings of the earlier subscription.
        .onConflict((oc) => oc.columns(['user_id', 'stream_id']).doUpdateSet({ active: true, version: e.stream_version })));
    },
    UserUnsubscribed: async (trx, d, e) => {
      await runPrepared(trx, trx.updateTable('subscriptions').set({ active: false, version: e.stream_version }).where('user_id', '=', d.user_id).where('stream_id', '=', d.stream_id));
    },
    SubscriptionPropertyChanged: async (trx, d, e) => {
      await trx
        .updateTable('subscriptions')
        .set({ [d.property]: d.value, version: e.stream_version })
        .where('user_id', '=', d.user_id)
        .where('stream_id', '=', d.stream_id)
        .execute();
    },
    // Topics compare case-insensitively: a policy replaces any earlier one for the same topic, and
    // keeps the spelling of the latest request.
    // A preference set by a forgotten message names no topic any more: there is nothing to fold.
    UserTopicPolicySet: async (trx, d) => {
      if (d.topic === SHREDDED) return 'unchanged';
      await trx
        .deleteFrom('user_topics')
        .where('user_id', '=', d.user_id)
        .where('stream_id', '=', d.stream_id)
        .where((eb) => eb(eb.fn('lower', ['topic']), '=', d.topic.toLowerCase()))
        .execute();
      if (d.visibility_policy === 0) return;
      await trx
        .insertInto('user_topics')
        .values({
          user_id: d.user_id,
          stream_id: d.stream_id,
          topic: d.topic,
          visibility_policy: d.visibility_policy,
          last_updated: d.last_updated,
          message_id: d.message_id ?? null,
        })
        .execute();
    },
    // Preferences sealed under a forgotten message's key go with it (a replay skips their events).
    MessagesShredded: async (trx, d) => {
      if (d.message_ids.length === 0) return 'unchanged';
      await trx.deleteFrom('user_topics').where('message_id', 'in', d.message_ids).execute();
    },
  },
});
