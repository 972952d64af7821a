// Issue 24 item 1: a slow 10,000-character message never stalls the event loop. Each pathological family goes
// through the HTTP API while a second client polls /health/live; every poll must answer promptly, and each
// message gets 200 or 400 "Unable to render message", never a 500.
import t from 'tap';
import { adversarialFamilies, repeatedNestedLists } from '../helpers/markdown-adversarial.js';
import { createChannel } from '../helpers/channels-fixture.js';
import { Role, startTestServer, type TestServer } from '../helpers/server.js';

const SIZE = 10_000;
const families: [string, string][] = [
  ...['table rows', 'hard line breaks', 'backtick runs', 'bracket pairs', 'links', 'nested quotes', 'nested bullets', 'quote fences'].map(
    (name): [string, string] => [name, adversarialFamilies[name]!(SIZE)],
  ),
  ['nested lists, repeated', repeatedNestedLists(SIZE)],
];

/** Polls /health/live back to back until `done` settles; returns the slowest answer in ms. */
async function slowestHealthWhile(s: TestServer, done: Promise<unknown>): Promise<number> {
  let finished = false;
  void done.finally(() => (finished = true));
  let slowest = 0;
  do {
    const started = performance.now();
    const live = await s.fastify.inject({ method: 'GET', url: '/health/live' });
    slowest = Math.max(slowest, performance.now() - started);
    if (live.statusCode !== 200) throw new Error(`/health/live answered ${live.statusCode}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  } while (!finished);
  return slowest;
}

// A timed-out worker is replaced, and a new worker first compiles the renderer: on a loaded machine the
// families together take minutes.
t.setTimeout(600_000);

t.test('pathological messages render without blocking /health/live', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  await createChannel(s, member, 'loop', []);
  // Warm up: the renderer inline and the render workers (their first start compiles the renderer; plain
  // text renders in place, so the emphasis is what sends this one to a worker).
  t.equal((await s.api('POST', '/messages/render', member, { content: '*warm*' })).status, 200);
  await s.api('POST', '/messages/render', member, { content: '*warm* '.repeat(SIZE / 7) });
  // The floor: how slow a health answer is on this machine right now, with nothing rendering.
  const floor = await slowestHealthWhile(s, new Promise((resolve) => setTimeout(resolve, 2_000)));
  // ~100 ms for a process blocked by nothing but its own requests, plus what the machine's load adds (a render
  // on the main thread blocks for 100-160 ms on an idle core, for seconds on a loaded one).
  const bound = 100 + 4 * floor;
  for (const [name, content] of families) {
    const paths = [['/messages', { type: 'stream', to: 'loop', topic: 'dos', content }]] as [string, Record<string, unknown>][];
    if (name === 'table rows') paths.push(['/messages/render', { content }]);
    for (const [path, params] of paths) {
      const started = performance.now();
      const request = s.api('POST', path, member, params);
      const slowest = await slowestHealthWhile(s, request);
      const r = await request;
      t.comment(`${name} via ${path}: ${r.status} after ${(performance.now() - started).toFixed(0)} ms`);
      t.ok(slowest <= bound, `${name} via ${path}: slowest /health/live ${slowest.toFixed(0)} ms (bound ${bound.toFixed(0)} ms)`);
      t.ok(r.status === 200 || r.status === 400, `${name} via ${path}: ${r.status}`);
      if (r.status !== 200) t.same(r.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Unable to render message' }, `${name} via ${path}`);
    }
  }
});
