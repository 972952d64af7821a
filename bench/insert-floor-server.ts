/**
 * The send floor: a bare fastify process answering POST /messages (a form body, as the real API
 * takes) with one INSERT ... RETURNING id into a plain table. Run as its own process by
 * bench/messages.ts, on the same database as the server under test (DATABASE_URL, PORT).
 */
import Fastify from 'fastify';
import formbody from '@fastify/formbody';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
await pool.query(`CREATE TABLE IF NOT EXISTS plain_messages (
  id bigserial PRIMARY KEY, sender text NOT NULL, recipient text NOT NULL, topic text NOT NULL, content text NOT NULL, date_sent bigint NOT NULL)`);
const app = Fastify({ logger: false });
await app.register(formbody);
app.post('/messages', async (request) => {
  const body = request.body as Record<string, string | undefined>;
  const result = await pool.query<{ id: string }>(
    'INSERT INTO plain_messages (sender, recipient, topic, content, date_sent) VALUES ($1, $2, $3, $4, $5) RETURNING id',
    [request.headers.authorization ?? '', body.to ?? '', body.topic ?? '', body.content ?? '', Math.floor(Date.now() / 1000)],
  );
  return { result: 'success', msg: '', id: Number(result.rows[0]!.id) };
});
app.addHook('onClose', () => pool.end());
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
console.log('listening on floor');
