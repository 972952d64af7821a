import { Argument, Command, Option } from 'commander';
import { loadConfig } from '../config.js';
import { allProjections } from '../../projections/index.js';
import { eraseUserCommand, legalHoldCommand } from './forgetting-commands.js';
import { FILE_STORAGE_KINDS, migrateFilesCommand } from './file-commands.js';
import type { FileStorageKind } from '../config.js';
import { createUserCommand, exportCommand, generateLogKeyCommand, importCommand, migrateCommand, onlineRebuildCommand, reactivateRealmCommand, rebuildCommand, replayCommand, signLogCommand, verifyCommand } from './commands.js';

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

const count = (value: string) => {
  if (!/^\d+$/.test(value)) throw new Error(`not a count of events: ${value}`);
  return Number(value);
};
program.command('verify').description('walk the hash chain; report the first broken position and the head hash')
  .option('--head <hash>', 'a head hash exported earlier that the log must still contain')
  .option('--public-key <file...>', 'check the signed ranges with these public keys (PEM; old and new key while rotating)')
  .option('--heads <file>', 'heads kept outside the database, one "position hash" per line, that must all be in the chain')
  .option('--tolerate-unsigned <n>', 'with --public-key: unsigned events allowed after the last signed head (a running server)', count, 0)
  .action(async (opts: { head?: string; publicKey?: string[]; heads?: string; tolerateUnsigned: number }) => {
    const ok = await verifyCommand(loadConfig(), allProjections, out, {
      expectedHead: opts.head, publicKeyFiles: opts.publicKey, headsFile: opts.heads, tolerateUnsigned: opts.tolerateUnsigned,
    });
    if (!ok) process.exitCode = 1;
  });

program.command('generate-log-key').description('write a new Ed25519 key pair for signing the log (LOG_SIGNING_KEY_FILE) and print where')
  .option('--dir <dir>', 'directory for log-signing-key.pem (0600) and log-signing-key.pub.pem', '.')
  .action((opts: { dir: string }) => {
    generateLogKeyCommand(out, opts.dir);
  });

program.command('sign-log').description('sign committed ranges of the log that no server signed (with the configured LOG_SIGNING_KEY_FILE)')
  .option('--tail', 'also sign the rows after the last signed range (stop every server first)')
  .action(async (opts: { tail?: boolean }) => {
    await signLogCommand(loadConfig(), allProjections, out, { tail: opts.tail === true });
  });

program.command('export').description('write the log as JSON lines').option('-o, --out <file>', 'file (default: stdout)')
  .action(async (opts: { out?: string }) => {
    await exportCommand(loadConfig(), allProjections, (line) => console.error(line), opts.out);
  });

program.command('import').description('load an export into an empty database and rebuild the read tables').argument('<file>')
  .option('--keys <file>', "the export's data keys (<file>.keys); without it every sealed personal value reads as shredded")
  .option('--public-key <file...>', "check the export's signatures (<file>.signatures) with these public keys before anything is kept")
  .action(async (file: string, opts: { keys?: string; publicKey?: string[] }) => {
    await importCommand(loadConfig(), allProjections, out, file, opts.keys, { publicKeyFiles: opts.publicKey });
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

program.command('erase-user').description("erase a person: destroy the key of their name, addresses, profile and status; they become a deleted user")
  .argument('<email>')
  .addOption(new Option('--messages <what>', 'their messages: shred (unless a legal hold covers them) or keep').choices(['shred', 'keep']).default('keep'))
  .option('--reason <text>', 'why (recorded in the erasure event)')
  .action(async (email: string, opts: { messages: 'shred' | 'keep'; reason?: string }) => {
    await eraseUserCommand(loadConfig(), allProjections, out, { email, messages: opts.messages, reason: opts.reason });
  });

const hold = program.command('legal-hold').description('legal holds: while a channel or a person is held, nothing of theirs is shredded');
hold.command('list').description('list the holds').action(async () => {
  await legalHoldCommand(loadConfig(), allProjections, out, { action: 'list' });
});
for (const [action, description] of [['add', 'put a channel or a person on hold'], ['remove', 'lift a hold']] as const) {
  hold.command(action).description(description)
    .addArgument(new Argument('<scope>', 'channel or user').choices(['channel', 'user']))
    .argument('<id>', 'the channel id or user id')
    .option('--reason <text>', 'why (recorded in the hold event)')
    .action(async (scope: 'channel' | 'user', id: string, opts: { reason?: string }) => {
      await legalHoldCommand(loadConfig(), allProjections, out, { action, scope, id: Number(id), reason: opts.reason });
    });
}

program.command('migrate-files').description('copy every stored file (uploads, avatars, emoji, realm images, exports) to another store and verify each by SHA-256')
  .addOption(new Option('--from <store>', 'where the files are now').choices(FILE_STORAGE_KINDS).makeOptionMandatory())
  .addOption(new Option('--to <store>', 'where they should be').choices(FILE_STORAGE_KINDS).makeOptionMandatory())
  .action(async (opts: { from: FileStorageKind; to: FileStorageKind }) => {
    // S3 needs its bucket even when FILE_STORAGE names another store.
    const config = loadConfig({ ...process.env, FILE_STORAGE: opts.from === 's3' || opts.to === 's3' ? 's3' : process.env.FILE_STORAGE });
    const report = await migrateFilesCommand(config, allProjections, out, opts.from, opts.to);
    if (report.mismatched.length > 0) process.exitCode = 1;
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
