/**
 * The long-poll floor: a bare fastify server that holds every GET /hold request until POST /release,
 * then answers them all at once. Run as its own process by bench/longpoll.ts.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
let held: Array<() => void> = [];
app.get('/hold', (_request, reply) => {
  held.push(() => void reply.send({ result: 'success', msg: '', events: [{ type: 'heartbeat', id: 1 }] }));
});
app.get('/release', async () => {
  const waiting = held;
  held = [];
  for (const answer of waiting) answer();
  return { released: waiting.length };
});
app.get('/held', async () => ({ held: held.length }));
// The same accept queue as src/server.ts, so both hold their crowd under the same conditions.
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT), backlog: 4096 });
console.log('listening on floor');
