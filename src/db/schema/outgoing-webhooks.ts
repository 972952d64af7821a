/** Tables of migration 0272: outgoing webhook bots' services and their unanswered triggers. */
export interface BotServicesTable {
  user_id: number;
  realm_id: number;
  name: string;
  base_url: string;
  /** 1 generic (Zulip's format), 2 Slack-compatible */
  interface: number;
  token: string;
}

export interface OutgoingWebhookJobsTable {
  message_id: number;
  bot_id: number;
  realm_id: number;
  /** 'mention' or 'direct_message' */
  trigger: string;
}

export interface OutgoingWebhookTables {
  bot_services: BotServicesTable;
  outgoing_webhook_jobs: OutgoingWebhookJobsTable;
}
