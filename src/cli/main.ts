import { Command, Option } from 'commander';
import { loadConfig } from '../config.js';
import { allProjections } from '../../projections/index.js';
import { createUserCommand, reactivateRealmCommand, exportCommand, importCommand, migrateCommand, onlineRebuildCommand, rebuildCommand, replayCommand, verifyCommand } from './commands.js';

const out = (line: string) => console.log(line);
// `export | head` closes the pipe early: that is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});
const program = new Command()
  .name('npm run cli --')
  .description('Operations on the event log and read tables (embedded database: stop the server first).');

program.command('migrate').description('apply database migrations').action(async () => {
  await migrateCommand(loadConfig(), allProjections, out);
});

program.command('rebuild').description('drop and refill every read table from the log; prints checksums before and after')
  .option('--online', 'build new tables beside the live ones while servers keep serving, then swap them in (PostgreSQL)')
  .option('--projection <name...>', 'with --online: only these projections')
  .action(async (opts: { online?: boolean; projection?: string[] }) => {
    if (opts.online) {
      await onlineRebuildCommand(loadConfig(), allProjections, out, { only: opts.projection });
      return;
    }
    const report = await rebuildCommand(loadConfig(), allProjections, out);
    if (!report.identical) process.exitCode = 1;
  });

program.command('verify').description('walk the hash chain; report the first broken position and the head hash')
  .option('--head <hash>', 'a head hash exported earlier that the log must still contain')
  .action(async (opts: { head?: string }) => {
    if (!(await verifyCommand(loadConfig(), allProjections, out, opts.head))) process.exitCode = 1;
  });

program.command('export').description('write the log as JSON lines').option('-o, --out <file>', 'file (default: stdout)')
  .action(async (opts: { out?: string }) => {
    await exportCommand(loadConfig(), allProjections, (line) => console.error(line), opts.out);
  });

program.command('import').description('load an export into an empty database and rebuild the read tables').argument('<file>')
  .option('--keys <file>', "the export's data keys (<file>.keys); without it every sealed personal value reads as shredded")
  .action(async (file: string, opts: { keys?: string }) => {
    await importCommand(loadConfig(), allProjections, out, file, opts.keys);
  });

program.command('replay').description('build the read tables as they were at a past moment into another, empty database')
  .requiredOption('--until <point>', 'a log position, or an ISO 8601 time (the events that happened at or before it)')
  .requiredOption('--database <target>', 'a PostgreSQL URL, or a directory for an embedded database (serve it with DATA_DIR=<dir>)')
  .action(async (opts: { until: string; database: string }) => {
    await replayCommand(loadConfig(), allProjections, out, opts);
  });

program.command('create-user').description('create a user and write a zuliprc for it')
  .requiredOption('--email <email>')
  .requiredOption('--full-name <name>')
  .addOption(new Option('--role <role>', 'owner, administrator, moderator, member or guest').default('member'))
  .option('--bot-type <n>', '1 generic, 2 incoming webhook, 3 outgoing webhook, 4 embedded')
  .option('--password <password>')
  .action(async (opts: { email: string; fullName: string; role: string; botType?: string; password?: string }) => {
    const roles: Record<string, number> = { owner: 100, administrator: 200, admin: 200, moderator: 300, member: 400, guest: 600 };
    const role = roles[opts.role] ?? Number(opts.role);
    await createUserCommand(loadConfig(), allProjections, out, {
      email: opts.email, fullName: opts.fullName, role, botType: opts.botType ? Number(opts.botType) : undefined, password: opts.password,
    });
  });

program.command('reactivate-realm').description('reactivate the organization after an owner deactivated it (POST /realm/deactivate)')
  .action(async () => {
    await reactivateRealmCommand(loadConfig(), allProjections, out);
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  console.error(`error: ${(error as Error).message}`);
  process.exitCode = 2;
}
