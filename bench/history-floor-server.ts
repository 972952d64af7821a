/**
 * The history-read floor: a bare fastify process answering GET /messages with one SQL query for the
 * newest 100 rows of a channel's topic, turned into JSON. Run as its own process by bench/history.ts,
 * on the same database as the server under test (DATABASE_URL, PORT).
 */
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const app = Fastify({ logger: false });
app.get('/messages', async (request) => {
  const query = request.query as { realm_id: string; stream_id: string; topic: string };
  const result = await pool.query(
    `SELECT m.id, m.realm_id, m.stream_id, m.topic, m.sender_id, m.date_sent, m.content, m.rendered_content, m.recipient_id,
       m.dm_key, m.client, m.is_me_message, m.has_link, m.has_image, m.has_attachment, m.stream_wildcard, m.topic_wildcard,
       m.last_edit_timestamp, m.edit_history, m.version
     FROM messages m WHERE m.realm_id = $1 AND m.stream_id = $2 AND lower(m.topic) = lower($3)
     ORDER BY m.id DESC LIMIT 100`,
    [Number(query.realm_id), Number(query.stream_id), query.topic],
  );
  return { result: 'success', msg: '', messages: result.rows.reverse() };
});
app.addHook('onClose', () => pool.end());
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
console.log('listening on floor');
