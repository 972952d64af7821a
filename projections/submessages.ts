import { sql } from 'kysely';
import type { Trx } from '../src/projections-api.js';
import { ridesWithNext } from '../src/db/prepared.js';
import type { DataOf } from '../src/domain/events.js';
import { defineProjection, type RunEvent } from './define.js';

type WidgetRow = { id: number; message_id: number; sender_id: number; msg_type: string; content: string };

const widgetRow = (d: DataOf<'MessageSent'>): WidgetRow | null =>
  d.widget_submessage_id !== undefined && typeof d.widget_content === 'string'
    ? { id: d.widget_submessage_id, message_id: d.message_id, sender_id: d.sender_id, msg_type: 'widget', content: d.widget_content }
    : null;

/** Nothing reads its result: it rides with the pass's next statement (or its COMMIT). */
async function insert(trx: Trx, rows: WidgetRow[]): Promise<void> {
  if (rows.length === 0) return;
  await ridesWithNext(trx, sql`INSERT INTO submessages (id, message_id, sender_id, msg_type, content)
    SELECT id, message_id, sender_id, msg_type, content FROM json_to_recordset(${JSON.stringify(rows)}::json)
      AS r(id int, message_id int, sender_id int, msg_type text, content text)
    ORDER BY id
    ON CONFLICT (id) DO NOTHING`, { prepared: true });
}

async function removeFor(trx: Trx, messageIds: number[]): Promise<void> {
  if (messageIds.length === 0) return;
  await trx.deleteFrom('submessages').where('message_id', 'in', messageIds).execute();
}

export const submessagesProjection = defineProjection({
  name: 'submessages',
  version: 1,
  tables: ['submessages'],
  // Sends fold in runs (see the messages projection): a run's widgets are one statement.
  bulk: {
    MessageSent: async (trx, run: ReadonlyArray<RunEvent<'MessageSent'>>) => {
      await insert(trx, run.map((e) => widgetRow(e.data)).filter((r): r is WidgetRow => r !== null));
    },
    // Votes arrive in crowds (a poll in a busy channel): a run of them is one statement too.
    SubmessageAdded: async (trx, run: ReadonlyArray<RunEvent<'SubmessageAdded'>>) => {
      await insert(trx, run.map(({ data: d }) => ({ id: d.submessage_id, message_id: d.message_id, sender_id: d.sender_id, msg_type: d.msg_type, content: d.content })));
    },
  },
  handlers: {
    MessageSent: async (trx, d) => insert(trx, [widgetRow(d)].filter((r): r is WidgetRow => r !== null)),
    SubmessageAdded: async (trx, d) =>
      insert(trx, [{ id: d.submessage_id, message_id: d.message_id, sender_id: d.sender_id, msg_type: d.msg_type, content: d.content }]),
    MessagesDeleted: async (trx, d) => removeFor(trx, d.message_ids),
    MessagesShredded: async (trx, d) => removeFor(trx, d.message_ids),
  },
});
