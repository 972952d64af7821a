import t from 'tap';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { repoRoot as root } from '../helpers/repo-root.js';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';
import { parse } from 'yaml';

// No container engine here: check the shape that `docker build` and `docker compose up` depend on.
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
const compose = parse(read('compose.yaml'), { merge: true });
const services = compose.services as Record<string, any>;
const dockerfile = DockerfileParser.parse(read('Dockerfile'));
const packageJson = JSON.parse(read('package.json'));

const args = (instruction: Instruction) => instruction.getArguments().map((a) => a.getValue());
/** An exec-form (JSON array) instruction's words. */
const execForm = (instruction: Instruction) => JSON.parse(instruction.getArgumentsContent() ?? '[]') as string[];

t.test('Dockerfile: a build stage and a slim run stage, non-root, node on the compiled output', async (t) => {
  const stages = dockerfile.getFROMs();
  t.equal(stages.length, 2, 'two stages');
  t.same(stages.map((from) => from.getBuildStage()), ['build', 'runtime']);
  t.match(stages[0]!.getImageName(), /^node$/);
  t.match(stages[0]!.getImageTag(), /^20/, 'the Node.js version package.json requires');
  const [buildStage, runStage] = dockerfile.getInstructions().reduce<Instruction[][]>((acc, i) => {
    if (i.getKeyword() === 'FROM') acc.push([]);
    acc.at(-1)?.push(i);
    return acc;
  }, []);
  const runs = (stage: Instruction[]) => stage.filter((i) => i.getKeyword() === 'RUN').map((i) => i.getArgumentsContent() ?? '');
  t.ok(runs(buildStage!).some((r) => /npm ci\b(?!.*--omit=dev)/.test(r)), 'the build stage installs dev dependencies');
  t.ok(runs(buildStage!).some((r) => /npm run build/.test(r)), 'and compiles');
  t.ok(runs(runStage!).some((r) => /npm ci .*--omit=dev/.test(r)), 'the run stage installs production dependencies only');
  t.ok(runs(runStage!).some((r) => /apt-get install .*python3-pygments/.test(r)), 'and Pygments, which highlights code blocks');
  // The install's postinstall applies patches/: each stage has them before its npm ci.
  for (const stage of [buildStage!, runStage!]) {
    const patchesAt = stage.findIndex((i) => i.getKeyword() === 'COPY' && /^patches\b/.test(i.getArgumentsContent() ?? ''));
    const installAt = stage.findIndex((i) => i.getKeyword() === 'RUN' && /npm ci\b/.test(i.getArgumentsContent() ?? ''));
    t.ok(patchesAt >= 0 && patchesAt < installAt, 'patches/ is copied before npm ci');
  }
  const copyInstructions = runStage!.filter((i) => i.getKeyword() === 'COPY') as Array<Instruction & { getFlags(): Array<{ getName(): string; getValue(): string | null }> }>;
  const copies = copyInstructions.map((i) => i.getArgumentsContent() ?? '');
  const fromBuild = copyInstructions.filter((i) => i.getFlags().some((f) => f.getName() === 'from' && f.getValue() === 'build'));
  t.ok(fromBuild.some((i) => /^\/app\/dist\b/.test(i.getArgumentsContent() ?? '')), 'it copies the compiled output from the build stage');
  t.notOk(copies.some((c) => /\bsrc\b/.test(c)), 'and no TypeScript source');
  const user = runStage!.filter((i) => i.getKeyword() === 'USER').at(-1);
  t.ok(user && !['root', '0'].includes(args(user)[0]!), 'runs as a non-root user');
  const cmd = runStage!.find((i) => i.getKeyword() === 'CMD')!;
  t.equal(execForm(cmd)[0], 'node', 'exec form: node is the container main process');
  t.ok(execForm(cmd).includes('dist/src/server.js'));
  const stopSignal = runStage!.find((i) => i.getKeyword() === 'STOPSIGNAL');
  t.equal(stopSignal && args(stopSignal)[0], 'SIGTERM', 'the signal the server shuts down gracefully on');
  const health = runStage!.find((i) => i.getKeyword() === 'HEALTHCHECK');
  t.match(health?.getArgumentsContent(), /\/health\/live/);
  t.match(packageJson.scripts.build, /--outdir=dist\b/, 'the build writes where the image copies from');
});

t.test('.dockerignore keeps data, secrets and local builds out of the context', async (t) => {
  const ignored = read('.dockerignore').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  for (const entry of ['node_modules', 'data', '.git', 'dist']) t.ok(ignored.includes(entry), entry);
});

t.test('compose: PostgreSQL, NATS with JetStream, two replicas of one image, a load balancer', async (t) => {
  t.match(services.postgres.image, /^postgres:1[5-9]/);
  t.ok(services.postgres.healthcheck?.test, 'postgres has a health check');
  t.match(services.nats.image, /^nats:/);
  t.ok(services.nats.command.includes('-js'), 'JetStream is on');
  t.ok(services.nats.healthcheck?.test, 'nats has a health check');
  const replicas = Object.entries(services).filter(([name]) => name.startsWith('server-'));
  t.equal(replicas.length, 2, 'two replicas');
  t.equal(new Set(replicas.map(([, s]) => s.image)).size, 1, 'one image');
  t.equal(replicas.filter(([, s]) => s.build).length, 1, 'built once');
  t.equal(replicas.find(([, s]) => s.build)![1].build.dockerfile, 'Dockerfile');
  const urls = new Set(replicas.map(([, s]) => `${s.environment.DATABASE_URL} ${s.environment.NATS_URL}`));
  t.equal(urls.size, 1, 'both replicas share one database and one NATS');
  for (const [name, s] of replicas) {
    t.match(s.environment.DATABASE_URL, /^postgres:\/\/\w+:\w+@postgres:5432\/\w+$/, `${name} points at the postgres service`);
    t.match(s.environment.NATS_URL, /^nats:\/\/nats:4222$/, `${name} points at the nats service`);
    t.equal(s.environment.HOST, '0.0.0.0', `${name} listens on all interfaces in its container`);
    t.match(s.environment.DATA_KEY_SECRET, /^\$\{DATA_KEY_SECRET:\?/, `${name} refuses to start without the shared key-encryption key`);
    t.equal(s.depends_on.postgres.condition, 'service_healthy');
    t.equal(s.depends_on.nats.condition, 'service_healthy');
    t.ok(s.healthcheck?.test?.join(' ').includes(`:${s.environment.PORT}/health/ready`), `${name} health check asks its own readiness`);
    t.notOk(s.command, `${name} runs the image's command (node on the compiled output)`);
    t.notOk((s.volumes ?? []).some((v: string) => v.startsWith('./')), `${name} does not mount the source tree`);
  }
  const pgEnv = services.postgres.environment;
  const dbUrl = new URL(replicas[0]![1].environment.DATABASE_URL);
  t.equal(dbUrl.username, pgEnv.POSTGRES_USER);
  t.equal(dbUrl.password, pgEnv.POSTGRES_PASSWORD);
  t.equal(dbUrl.pathname.slice(1), pgEnv.POSTGRES_DB);

  const proxy = services.proxy;
  t.ok(proxy, 'a load balancer');
  const [configFile, mountedAt] = (proxy.volumes[0] as string).split(':');
  t.equal(mountedAt, '/etc/nginx/nginx.conf');
  const config = read(configFile!);
  for (const [name, s] of replicas) t.match(config, new RegExp(`server ${name}:${s.environment.PORT}\\b`), `the balancer sends to ${name}`);
  t.match(config, /proxy_read_timeout (\d+)s/, 'long-polls outlive the proxy default');
  t.ok(Number(/proxy_read_timeout (\d+)s/.exec(config)![1]) > 50, 'longer than a heartbeat');
  for (const name of ['server-1', 'server-2']) t.equal(proxy.depends_on[name].condition, 'service_healthy');
  for (const volume of ['pgdata', 'natsdata']) t.ok(volume in compose.volumes, `${volume} is a named volume`);
});

/** Every environment variable the server reads, from its sources. */
function variablesRead(): Set<string> {
  const found = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const file = path.join(dir, entry);
      if (statSync(file).isDirectory()) walk(file);
      else if (file.endsWith('.ts')) for (const m of readFileSync(file, 'utf8').matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)) found.add(m[1]!);
    }
  };
  walk(path.join(root, 'src'));
  return found;
}

t.test('every variable the server reads is documented in README and known to compose or the image', async (t) => {
  const readme = read('README.md');
  const variables = variablesRead();
  t.ok(variables.has('DATABASE_URL') && variables.has('DATA_KEY_SECRET'), 'the scan finds the variables');
  for (const name of variables) t.match(readme, new RegExp(`\`${name}\``), `${name} is in README's configuration table`);
  const setByDeployment = new Set([...Object.keys(services['server-1'].environment), ...dockerfile.getENVs().flatMap((e) => e.getProperties().map((p) => p.getName()))]);
  for (const name of setByDeployment) if (name !== 'NODE_ENV') t.ok(variables.has(name), `${name} set by the deployment is one the server reads`);
});
