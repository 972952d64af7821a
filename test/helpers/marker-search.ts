import { randomUUID } from 'node:crypto';
import { createWriteStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { sql } from 'kysely';
import { connect } from 'nats';
import type { Db } from '../../src/db/database.js';
import { writeExport } from '../../src/cli/commands.js';
import { keyFileOf, writeKeyFile } from '../../src/eventstore/crypto/key-transfer.js';

/** Tables (of the public schema) in which `marker` appears anywhere in a row's text form. */
export async function tablesContaining(db: Db, marker: string): Promise<string[]> {
  const { rows: tables } = await sql<{ name: string }>`
    SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`.execute(db);
  const found: string[] = [];
  for (const { name } of tables) {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(name)} t WHERE strpos(t::text, ${marker}) > 0`.execute(db);
    if (Number(rows[0]!.n) > 0) found.push(name);
  }
  return found;
}

/** Files under `dir` (recursively) whose bytes contain `marker`, relative to `dir`. */
export function filesContaining(dir: string, marker: string): string[] {
  if (!existsSync(dir)) return [];
  const needle = Buffer.from(marker, 'utf8');
  const found: string[] = [];
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const file = path.join(at, name);
      if (statSync(file).isDirectory()) walk(file);
      else if (readFileSync(file).includes(needle)) found.push(path.relative(dir, file));
    }
  };
  walk(dir);
  return found;
}

/**
 * Sequence numbers of the messages of a JetStream stream whose payload or headers contain
 * `marker`, byte-wise; every message from the first to the last is read.
 */
export async function natsMessagesContaining(natsUrl: string, stream: string, marker: string): Promise<number[]> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await nc.jetstreamManager();
    const info = await jsm.streams.info(stream);
    const needle = Buffer.from(marker, 'utf8');
    const found: number[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq += 1) {
      const message = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
      if (!message) continue;
      const headers = message.header ? Buffer.from(JSON.stringify([...message.header.keys()].map((k) => [k, message.header!.values(k)]))) : Buffer.alloc(0);
      if (Buffer.from(message.data).includes(needle) || headers.includes(needle)) found.push(seq);
    }
    return found;
  } finally {
    await nc.close();
  }
}

/** Writes an export (and its key file) of `db` as `export` does, and says whether either contains `marker`. */
export async function exportContains(db: Db, markers: readonly string[]): Promise<{ export: string[]; keys: string[]; events: number }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'marker-export-'));
  try {
    const file = path.join(dir, 'log.jsonl');
    const sink = createWriteStream(file);
    const events = await writeExport(db, sink);
    sink.end();
    await finished(sink);
    await writeKeyFile(db, keyFileOf(file));
    const text = readFileSync(file);
    const keys = readFileSync(keyFileOf(file));
    return {
      export: markers.filter((m) => text.includes(Buffer.from(m))),
      keys: markers.filter((m) => keys.includes(Buffer.from(m))),
      events,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A string no test data contains by chance, to search for after forgetting. */
export function uniqueMarker(): string {
  return `marker${randomUUID().replace(/-/g, '')}`;
}
