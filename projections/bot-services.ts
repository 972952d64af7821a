import { defineProjection } from './define.js';

/** Each outgoing webhook bot's service: created with the bot, changed by PATCH /bots/{id}. */
export const botServicesProjection = defineProjection({
  name: 'bot-services',
  version: 1,
  tables: ['bot_services'],
  handlers: {
    UserCreated: async (trx, d) => {
      if (!d.service) return 'unchanged';
      const { name, base_url, interface: iface, token } = d.service;
      await trx
        .insertInto('bot_services')
        .values({ user_id: d.user_id, realm_id: d.realm_id, name, base_url, interface: iface, token })
        .onConflict((oc) => oc.column('user_id').doNothing())
        .execute();
    },
    BotServiceUpdated: async (trx, d) => {
      await trx.updateTable('bot_services').set({ base_url: d.base_url, interface: d.interface }).where('user_id', '=', d.user_id).execute();
    },
  },
});
