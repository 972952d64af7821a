import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config.js';

/**
 * Tests run on the embedded database by default. With TEST_DATABASE_URL (and TEST_NATS_URL) set,
 * each test file gets its own fresh PostgreSQL database instead, on the same code path as production.
 */
export async function testConfig(overrides: Partial<Config> = {}): Promise<Config> {
  const base = loadConfig({ RATE_LIMIT_PER_MINUTE: '0', HEARTBEAT_SECONDS: '2' });
  const admin = process.env.TEST_DATABASE_URL;
  let databaseUrl: string | undefined;
  if (admin) {
    const name = `test_${randomUUID().replace(/-/g, '')}`;
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    await client.query(`CREATE DATABASE ${name}`);
    await client.end();
    const url = new URL(admin);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
  }
  const natsStream = `TEST_${randomUUID().replace(/-/g, '').slice(0, 16).toUpperCase()}`;
  return { ...base, databaseUrl, natsUrl: databaseUrl ? process.env.TEST_NATS_URL : undefined, natsStream, ...overrides };
}
