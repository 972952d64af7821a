import { randomUUID } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { migrationsDigest } from '../../src/db/memory-template.js';

/**
 * Tests run on the embedded database by default. With TEST_DATABASE_URL (and TEST_NATS_URL) set,
 * each test file gets its own fresh PostgreSQL database instead, on the same code path as production.
 */
export async function testConfig(overrides: Partial<Config> = {}): Promise<Config> {
  // As the real server's test settings: no undo grace for resolve notices unless a test asks for it.
  const base = loadConfig({ RATE_LIMIT_PER_MINUTE: '0', HEARTBEAT_SECONDS: '2', RESOLVE_TOPIC_UNDO_GRACE_SECONDS: '0' });
  const admin = process.env.TEST_DATABASE_URL;
  let databaseUrl: string | undefined;
  if (admin) databaseUrl = await freshDatabase(admin);
  const natsStream = `TEST_${randomUUID().replace(/-/g, '').slice(0, 16).toUpperCase()}`;
  return { ...base, databaseUrl, natsUrl: databaseUrl ? process.env.TEST_NATS_URL : undefined, natsStream, ...overrides };
}

function databaseUrlNamed(admin: string, name: string): string {
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

async function withClient<T>(connectionString: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * A new database cloned from a migrated template (migrating 150 files per test server costs seconds),
 * with its own log identity as a freshly migrated database would have.
 */
async function freshDatabase(admin: string): Promise<string> {
  const template = await migratedTemplate(admin);
  const name = `test_${randomUUID().replace(/-/g, '')}`;
  await withClient(admin, (client) => client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
  const url = databaseUrlNamed(admin, name);
  await withClient(url, async (client) => {
    await client.query('ALTER TABLE log_identity DISABLE TRIGGER log_identity_fixed');
    await client.query('UPDATE log_identity SET log_id = gen_random_uuid(), created_at = now()');
    await client.query('ALTER TABLE log_identity ENABLE TRIGGER log_identity_fixed');
  });
  return url;
}

/** The template for this set of migrations, made once per PostgreSQL server (under a lock: test files run in parallel). */
async function migratedTemplate(admin: string): Promise<string> {
  const name = `test_template_${migrationsDigest()}`;
  return withClient(admin, async (client) => {
    await client.query("SELECT pg_advisory_lock(hashtext('zulip-es test template'))");
    try {
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (rowCount) return name;
      const building = `${name}_building`;
      await client.query(`DROP DATABASE IF EXISTS ${building}`);
      await client.query(`CREATE DATABASE ${building}`);
      const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: databaseUrlNamed(admin, building), max: 1 }) }) });
      try {
        await migrateToLatest(db);
      } finally {
        await db.destroy();
      }
      await client.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
      return name;
    } finally {
      await client.query("SELECT pg_advisory_unlock(hashtext('zulip-es test template'))");
    }
  });
}
