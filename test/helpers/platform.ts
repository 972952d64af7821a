import type { Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { createPlatform, type Platform } from '../../src/platform.js';
import type { Projection } from '../../src/projections-api.js';
import type { EventMetadata } from '../../src/eventstore/types.js';
import { allProjections } from '../../projections/index.js';
import { testConfig } from './config.js';

/** A platform (log, bus, projections) on a fresh database: in memory, or PostgreSQL with TEST_DATABASE_URL. */
export async function startTestPlatform(t: Test, projections: readonly Projection[] = allProjections): Promise<Platform> {
  const config = await testConfig();
  const platform = await createPlatform(config, { projections, inMemory: !config.databaseUrl });
  t.teardown(() => platform.close());
  return platform;
}

export function testMetadata(actor: number | null = null): EventMetadata {
  return { actor_id: actor, realm_id: 1, client: 'test', request_id: randomUUID(), time: new Date().toISOString() };
}
