// Deletes the JetStream streams whose names start with a prefix: what test runs (TEST_) and
// benchmarks (BENCH_) made on a shared NATS server, as .ci/run drops the test databases.
//
//   node scripts/drop-nats-streams.mjs TEST_ [nats://127.0.0.1:4222]
import { connect } from 'nats';

const [prefix, url = process.env.NATS_URL ?? 'nats://127.0.0.1:4222'] = process.argv.slice(2);
if (!prefix || !/^[A-Z][A-Z0-9_]*_$/.test(prefix)) {
  console.error('usage: node scripts/drop-nats-streams.mjs PREFIX_ [NATS_URL]  (a prefix of capitals ending in _)');
  process.exit(2);
}
let nc;
try {
  nc = await connect({ servers: url, timeout: 2_000, reconnect: false });
} catch (error) {
  console.log(`NATS at ${url} not reached (${error.message}): no streams dropped`);
  process.exit(0);
}
const jsm = await nc.jetstreamManager();
let dropped = 0;
for await (const name of jsm.streams.names()) {
  if (!name.startsWith(prefix)) continue;
  await jsm.streams.delete(name).catch(() => undefined);
  dropped += 1;
}
await nc.close();
console.log(`dropped ${dropped} NATS stream(s) named ${prefix}*`);
