/** Table of migration 0150: each user's bot storage entries. */
export interface BotStorageTable {
  user_id: number;
  key: string;
  value: string;
}

export interface BotStorageTables {
  bot_storage: BotStorageTable;
}
