/**
 * Presence heartbeats against a server process on PostgreSQL + NATS (bench/mixed.ts's startServer):
 * BENCH_CHATTERS (100) clients chat (one message each every ~second) in two phases of
 * BENCH_PHASE_SECONDS (60): first alone, then with presence pings at BENCH_PINGS_PER_SECOND (167,
 * the rate of 10,000 clients pinging once a minute) spread evenly over BENCH_USERS (300) users, time
 * accelerated: each user pings every users / rate seconds instead of every 60 s. One ping in ten
 * asks for the realm's presences (ping_only=false), the rest are ping_only. Beside every tenth ping a
 * GET /health/live (no authentication, no database) measures the floor: what any request waits for
 * the event loop and the machine in the same run, so a loaded machine shows as a high floor.
 *
 * Reports ping p50/p99 (target p99 < 20 ms), the PresenceChanged events appended to the log per
 * minute (read back through the audit API), and the server process's CPU (utime + stime from
 * /proc) in each phase: the extra CPU of the pings. Writes bench/results/presence.json.
 *
 *   npx tsx bench/presence.ts      (BENCH_RESULT names the result file; status 0 = timeout or refused)
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { percentile, writeResult } from './util.js';
import { loadAverage, request, setupWorld, startServer, type ServerProcess } from './mixed.js';

const CHATTERS = Number(process.env.BENCH_CHATTERS ?? 100);
const USERS = Math.max(CHATTERS, Number(process.env.BENCH_USERS ?? 300));
const PHASE_SECONDS = Number(process.env.BENCH_PHASE_SECONDS ?? 60);
const PINGS_PER_SECOND = Number(process.env.BENCH_PINGS_PER_SECOND ?? 167);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const form = (params: Record<string, string | number | boolean>) => new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();

/** CPU seconds the process has used (user + system). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100/s)
}

async function presenceEventCount(server: ServerProcess): Promise<number> {
  let count = 0;
  let after: number | null = 0;
  while (after !== null) {
    const page = await request(server.port, 'GET', `/api/v1/audit/events?${form({ event_types: JSON.stringify(['PresenceChanged']), after, limit: 1000 })}`, server.ownerAuth);
    if (page.status !== 200) throw new Error(`audit: ${page.status} ${JSON.stringify(page.body).slice(0, 200)}`);
    count += (page.body.events as unknown[]).length;
    after = page.body.next_after as number | null;
  }
  return count;
}

/** 100 clients, each sending a message about once a second until stop(). */
function chat(server: ServerProcess, world: Awaited<ReturnType<typeof setupWorld>>) {
  let stopped = false;
  let sent = 0;
  let errors = 0;
  const loops = world.clients.slice(0, CHATTERS).map(async (c, i) => {
    await sleep((i * 1000) / CHATTERS);
    while (!stopped) {
      const r = await request(server.port, 'POST', '/api/v1/messages', c.auth, form({ type: 'stream', to: c.channels[0]!, topic: 'presence bench', content: `hello ${sent}` }));
      if (r.status === 200) sent += 1;
      else errors += 1;
      await sleep(1000);
    }
  });
  return { async stop() { stopped = true; await Promise.all(loops); return { sent, errors }; } };
}

/** Pings at a fixed rate (open loop), round robin over the users. */
async function pings(server: ServerProcess, world: Awaited<ReturnType<typeof setupWorld>>, seconds: number) {
  const only: number[] = [];
  const full: number[] = [];
  const floor: number[] = [];
  let errors = 0;
  const errorsByStatus: Record<string, number> = {};
  const total = Math.round(seconds * PINGS_PER_SECOND);
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / PINGS_PER_SECOND;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    if (i % 10 === 5) inFlight.push(request(server.port, 'GET', '/health/live', undefined).then((r) => void (r.status === 200 && floor.push(r.ms))));
    const user = world.clients[i % USERS]!;
    const pingOnly = i % 10 !== 0;
    inFlight.push(request(server.port, 'POST', '/api/v1/users/me/presence', user.auth, form({ status: i % 7 === 0 ? 'idle' : 'active', ping_only: pingOnly, new_user_input: true })).then((r) => {
      if (r.status !== 200) {
        errors += 1;
        errorsByStatus[r.status] = (errorsByStatus[r.status] ?? 0) + 1;
      } else (pingOnly ? only : full).push(r.ms);
    }));
  }
  await Promise.all(inFlight);
  return { total, errors, errorsByStatus, only, full, floor };
}

const server = await startServer('bench_presence');
try {
  console.log(`creating ${USERS} users`);
  const world = await setupWorld(server, USERS, 4);
  const pid = server.child.pid!;

  console.log(`phase 1: ${CHATTERS} clients chat for ${PHASE_SECONDS} s`);
  const cpu0 = cpuSeconds(pid);
  const load0 = loadAverage();
  const quiet = chat(server, world);
  await sleep(PHASE_SECONDS * 1000);
  const chatOnly = await quiet.stop();
  const cpu1 = cpuSeconds(pid);

  // Every user's first ping is a change others see (offline to active) and is logged; at the
  // accelerated rate all of them would fall in the first seconds of the measured phase, where 10,000
  // real clients log in over hours. They are taken (and reported) apart, at the same rate.
  const eventsBeforeWarmUp = await presenceEventCount(server);
  console.log(`warm-up: one first ping per user (${USERS}) at ${PINGS_PER_SECOND} pings/s, with the chat`);
  const warmChat = chat(server, world);
  const warmUp = await pings(server, world, USERS / PINGS_PER_SECOND);
  await warmChat.stop();
  const eventsBefore = await presenceEventCount(server);
  console.log(`phase 2: the same chat plus ${PINGS_PER_SECOND} pings/s over ${USERS} users for ${PHASE_SECONDS} s`);
  const cpu2 = cpuSeconds(pid);
  const busy = chat(server, world);
  const pinged = await pings(server, world, PHASE_SECONDS);
  const chatWithPings = await busy.stop();
  const cpu3 = cpuSeconds(pid);
  const eventsAfter = await presenceEventCount(server);
  const load1 = loadAverage();

  const all = [...pinged.only, ...pinged.full];
  const cpuChat = (cpu1 - cpu0) / PHASE_SECONDS;
  const cpuBoth = (cpu3 - cpu2) / PHASE_SECONDS;
  const result = {
    benchmark: 'presence',
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, load_average_before: load0, load_average_after: load1 },
    setup: {
      users: USERS, chatters: CHATTERS, phase_seconds: PHASE_SECONDS, pings_per_second: PINGS_PER_SECOND,
      simulated_clients_at_one_ping_per_minute: PINGS_PER_SECOND * 60,
      each_user_pings_every_s: Number((USERS / PINGS_PER_SECOND).toFixed(2)),
      transport: 'HTTP on 127.0.0.1', database: 'PostgreSQL', bus: 'NATS',
    },
    targets: { ping_p99_ms: '< 20' },
    pings: {
      sent: pinged.total, errors: pinged.errors, errors_by_status: pinged.errorsByStatus,
      p50_ms: percentile(all, 50), p99_ms: percentile(all, 99),
      ping_only: { count: pinged.only.length, p50_ms: percentile(pinged.only, 50), p99_ms: percentile(pinged.only, 99) },
      with_presences: { count: pinged.full.length, p50_ms: percentile(pinged.full, 50), p99_ms: percentile(pinged.full, 99), entries: USERS },
      floor_health_live: { count: pinged.floor.length, p50_ms: percentile(pinged.floor, 50), p99_ms: percentile(pinged.floor, 99) },
      p99_over_floor_p99: Number((percentile(all, 99) / percentile(pinged.floor, 99)).toFixed(2)),
    },
    first_pings: {
      note: 'one per user before the measured phase, at the same rate, with the chat running: each one logs a PresenceChanged',
      sent: warmUp.total, errors: warmUp.errors,
      p50_ms: percentile([...warmUp.only, ...warmUp.full], 50), p99_ms: percentile([...warmUp.only, ...warmUp.full], 99),
      presence_events: eventsBefore - eventsBeforeWarmUp,
    },
    log: {
      presence_events_during_pings: eventsAfter - eventsBefore,
      presence_events_per_minute: Number(((eventsAfter - eventsBefore) / (PHASE_SECONDS / 60)).toFixed(1)),
      note: 'after the first pings, an event only when what others see changes (active to idle and back)',
    },
    cpu: {
      server_cpu_s_per_s_chat_only: Number(cpuChat.toFixed(3)),
      server_cpu_s_per_s_chat_and_pings: Number(cpuBoth.toFixed(3)),
      extra_cpu_s_per_s: Number((cpuBoth - cpuChat).toFixed(3)),
      extra_cpu_ms_per_ping: Number((((cpuBoth - cpuChat) * PHASE_SECONDS * 1000) / pinged.total).toFixed(3)),
    },
    chat: { chat_only: chatOnly, with_pings: chatWithPings },
  };
  console.log(JSON.stringify(result, null, 2));
  console.log(`written to ${writeResult(process.env.BENCH_RESULT ?? 'presence', result)}`);
} finally {
  await server.stop();
}
