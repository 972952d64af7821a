import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';

export interface Config {
  databaseUrl?: string;
  natsUrl?: string;
  /** JetStream stream that receives the log (one per database). */
  natsStream: string;
  dataDir: string;
  host: string;
  port: number;
  externalUrl: string;
  ownerEmail: string;
  realmName: string;
  /** Requests per user per minute; 0 turns rate limiting off. */
  rateLimitPerMinute: number;
  heartbeatSeconds: number;
  defaultQueueLifespanSecs: number;
  logLevel: string;
  /** The server-level WEB_PUBLIC_STREAMS_ENABLED setting (web-public channels also need the realm's enable_spectator_access). */
  webPublicStreamsEnabled?: boolean;
  /** DEVELOPMENT=true: routes only a development server has (POST /dev_fetch_api_key: an API key without a password). */
  development?: boolean;
  /** The key-encryption key of the data keys (DATA_KEY_SECRET, or the file DATA_KEY_SECRET_FILE names). */
  dataKeySecret?: string;
  /** The Ed25519 private key (PEM) that signs the log's ranges (LOG_SIGNING_KEY, or the file LOG_SIGNING_KEY_FILE names); unset: unsigned. */
  logSigningKey?: string;
  /** Days a deleted message stays readable in the log before it is shredded, unless the organization sets deleted_message_shred_days (0: at once). */
  deletedMessageShredDays: number;
  /** Seconds between runs of the retention and shredding job (0: never runs on its own). */
  forgettingIntervalSeconds: number;
  /** Seconds between passes of the job that promotes members past the waiting period to role:fullmembers (0: never on its own). */
  fullMembersIntervalSeconds: number;
  /**
   * Seconds within which resolving a topic and undoing it takes back the first notice instead of
   * sending a second (the real server's RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS; 0: always notify).
   */
  resolveTopicUndoGraceSeconds: number;
  /**
   * OUTGOING_WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true: outgoing webhook bots may post to private
   * networks and loopback (a development server, tests). Off by default: as the real server's
   * outgoing proxy, so that a bot cannot read the server's own network.
   */
  outgoingWebhooksAllowPrivateNetworks?: boolean;
  /** Server processes on this host sharing the port (WEB_CONCURRENCY); 1 runs the server in this process. */
  webConcurrency: number;
  /** Where uploaded files' bytes live (FILE_STORAGE); unset: PostgreSQL with DATABASE_URL, else the local disk. */
  fileStorage?: FileStorageKind;
  /** The S3-compatible store's settings, when fileStorage is 's3'. */
  s3?: S3Settings;
}

export type FileStorageKind = 'local' | 'postgres' | 's3';

export interface S3Settings {
  bucket: string;
  endpoint?: string;
  region: string;
  forcePathStyle: boolean;
}

function fileStorageOf(env: NodeJS.ProcessEnv): { fileStorage?: FileStorageKind; s3?: S3Settings } {
  const kind = env.FILE_STORAGE || undefined;
  if (kind !== undefined && kind !== 'local' && kind !== 'postgres' && kind !== 's3') {
    throw new Error(`FILE_STORAGE must be local, postgres or s3, got "${kind}"`);
  }
  if (kind === 'postgres' && !env.DATABASE_URL) throw new Error('FILE_STORAGE=postgres needs DATABASE_URL');
  if (kind !== 's3') return { fileStorage: kind };
  if (!env.S3_BUCKET) throw new Error('FILE_STORAGE=s3 needs S3_BUCKET');
  return {
    fileStorage: kind,
    s3: {
      bucket: env.S3_BUCKET,
      endpoint: env.S3_ENDPOINT || undefined,
      region: env.S3_REGION || 'us-east-1',
      forcePathStyle: env.S3_FORCE_PATH_STYLE === 'true',
    },
  };
}

function int(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${value}"`);
  return n;
}

/** A secret given either inline (NAME) or as a file (NAME_FILE); the variables are named where read, so a scan of the sources finds them. */
function secretOf(name: string, inline: string | undefined, file: string | undefined): string | undefined {
  if (inline) return inline;
  if (!file) return undefined;
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`${name}_FILE ${file} cannot be read: ${(error as Error).message}`);
  }
}

/**
 * WEB_CONCURRENCY: by default one process per core on PostgreSQL + NATS, one on anything else. The
 * embedded database is one in-process writer, and without NATS the processes would learn of each
 * other's writes only from the projection runner's safety timer (stale caches for seconds).
 */
function webConcurrencyOf(env: NodeJS.ProcessEnv, shared: boolean): number {
  if (env.WEB_CONCURRENCY === undefined || env.WEB_CONCURRENCY === '') return shared ? availableParallelism() : 1;
  const n = int(env.WEB_CONCURRENCY, 1, 'WEB_CONCURRENCY');
  if (n < 1) throw new Error(`WEB_CONCURRENCY must be at least 1, got "${env.WEB_CONCURRENCY}"`);
  if (n > 1 && !env.DATABASE_URL) {
    throw new Error(`WEB_CONCURRENCY=${n} needs DATABASE_URL: the embedded database (PGlite) has one writer inside one process, so it runs one server process (unset WEB_CONCURRENCY or set it to 1)`);
  }
  if (n > 1 && !env.NATS_URL) {
    throw new Error(`WEB_CONCURRENCY=${n} needs NATS_URL: server processes tell each other about new events through NATS (unset WEB_CONCURRENCY or set it to 1)`);
  }
  return n;
}

/** Environment → typed config; fails fast with a clear message on a bad value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const host = env.HOST || '127.0.0.1';
  const port = int(env.PORT, 9991, 'PORT');
  if (env.DATABASE_URL && !/^postgres(ql)?:\/\//.test(env.DATABASE_URL)) {
    throw new Error('DATABASE_URL must start with postgres:// or postgresql://');
  }
  if (env.NATS_URL && !/^(nats|tls):\/\//.test(env.NATS_URL)) throw new Error('NATS_URL must start with nats://');
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    natsUrl: env.NATS_URL || undefined,
    natsStream: env.NATS_STREAM || 'CHAT_EVENTS',
    dataDir: path.resolve(env.DATA_DIR || './data'),
    host,
    port,
    externalUrl: (env.EXTERNAL_URL || `http://${host === '0.0.0.0' ? 'localhost' : host}:${port}`).replace(/\/$/, ''),
    ownerEmail: env.OWNER_EMAIL || 'owner@example.com',
    realmName: env.REALM_NAME || 'Zulip Dev',
    rateLimitPerMinute: int(env.RATE_LIMIT_PER_MINUTE, 200, 'RATE_LIMIT_PER_MINUTE'),
    heartbeatSeconds: int(env.HEARTBEAT_SECONDS, 50, 'HEARTBEAT_SECONDS'),
    defaultQueueLifespanSecs: int(env.QUEUE_LIFESPAN_SECS, 600, 'QUEUE_LIFESPAN_SECS'),
    logLevel: env.LOG_LEVEL || 'info',
    webPublicStreamsEnabled: env.WEB_PUBLIC_STREAMS_ENABLED === 'true',
    development: env.DEVELOPMENT === 'true',
    outgoingWebhooksAllowPrivateNetworks: env.OUTGOING_WEBHOOKS_ALLOW_PRIVATE_NETWORKS === 'true',
    dataKeySecret: secretOf('DATA_KEY_SECRET', env.DATA_KEY_SECRET, env.DATA_KEY_SECRET_FILE),
    logSigningKey: secretOf('LOG_SIGNING_KEY', env.LOG_SIGNING_KEY, env.LOG_SIGNING_KEY_FILE),
    deletedMessageShredDays: int(env.DELETED_MESSAGE_SHRED_DAYS, 30, 'DELETED_MESSAGE_SHRED_DAYS'),
    forgettingIntervalSeconds: int(env.FORGETTING_INTERVAL_SECONDS, 3600, 'FORGETTING_INTERVAL_SECONDS'),
    fullMembersIntervalSeconds: int(env.FULL_MEMBERS_INTERVAL_SECONDS, 3600, 'FULL_MEMBERS_INTERVAL_SECONDS'),
    resolveTopicUndoGraceSeconds: int(env.RESOLVE_TOPIC_UNDO_GRACE_SECONDS, 60, 'RESOLVE_TOPIC_UNDO_GRACE_SECONDS'),
    webConcurrency: webConcurrencyOf(env, Boolean(env.DATABASE_URL && env.NATS_URL)),
    ...fileStorageOf(env),
  };
}
