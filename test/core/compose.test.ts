import t from 'tap';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

// No Docker engine here: check the shape a user's `docker compose up` depends on.
const compose = parse(readFileSync(new URL('../../compose.yaml', import.meta.url), 'utf8'), { merge: true });
const services = compose.services as Record<string, any>;

t.test('PostgreSQL, NATS with JetStream, and two server replicas', async (t) => {
  t.match(services.postgres.image, /^postgres:1[5-9]/);
  t.ok(services.postgres.healthcheck?.test, 'postgres has a health check');
  t.match(services.nats.image, /^nats:/);
  t.ok(services.nats.command.includes('-js'), 'JetStream is on');
  t.ok(services.nats.healthcheck?.test, 'nats has a health check');
  const replicas = Object.entries(services).filter(([name]) => name.startsWith('server-'));
  t.equal(replicas.length, 2, 'two replicas');
  const urls = new Set(replicas.map(([, s]) => `${s.environment.DATABASE_URL} ${s.environment.NATS_URL}`));
  t.equal(urls.size, 1, 'both replicas share one database and one NATS');
  for (const [name, s] of replicas) {
    t.match(s.environment.DATABASE_URL, /^postgres:\/\/\w+:\w+@postgres:5432\/\w+$/, `${name} points at the postgres service`);
    t.match(s.environment.NATS_URL, /^nats:\/\/nats:4222$/, `${name} points at the nats service`);
    t.equal(s.environment.HOST, '0.0.0.0', `${name} listens on all interfaces in its container`);
    t.equal(s.depends_on.postgres.condition, 'service_healthy');
    t.equal(s.depends_on.nats.condition, 'service_healthy');
    t.ok(s.healthcheck?.test?.join(' ').includes(`:${s.environment.PORT}/api/v1/server_settings`), `${name} health check hits its own port`);
    t.ok(s.ports.some((p: string) => p.startsWith(`${s.environment.PORT}:`)), `${name} publishes its port`);
    t.match(s.command.join(' '), /npm start/);
  }
  const pgEnv = services.postgres.environment;
  const dbUrl = new URL(replicas[0]![1].environment.DATABASE_URL);
  t.equal(dbUrl.username, pgEnv.POSTGRES_USER);
  t.equal(dbUrl.password, pgEnv.POSTGRES_PASSWORD);
  t.equal(dbUrl.pathname.slice(1), pgEnv.POSTGRES_DB);
});
