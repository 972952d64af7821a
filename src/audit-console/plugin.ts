import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import { readFileSync } from 'node:fs';
import { shippedPath } from '../source-root.js';
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import { ApiError, errors } from '../domain/errors.js';
import { isAdminRole } from '../domain/roles.js';
import { toApiError } from '../http/plugins/errors.js';
import { lazyValidatorCompiler } from '../http/params.js';
import type { AppServices } from '../http/services.js';
import { getUserByEmail, getUserById, type UserRow } from '../read/users.js';
import { realmHost } from '../read/realm.js';
import type { AuditEntry } from '../read/audit.js';
import { constantTimeEqual, verifyPassword } from '../services/secrets.js';
import { parseReplayPoint, resolveReplayPoint } from '../cli/replay.js';
import { eventTypes, eventsPerPeriod, filteredEvents, logPage, messageLifeEvents, namesFor, type ConsoleFilter } from './queries.js';
import { SESSION_COOKIE, SESSION_SECONDS, sessionUserId, sessionValid, signSession } from './session.js';
import { pastChannelMessages, pastDirectory, positionAtMoment } from './time-travel.js';
import { VerifyJobs, type VerifyJob } from './verify-jobs.js';
import { chartBars, dataFields, roleName, shortTime, views, type Names } from './view.js';

const PAGE_SIZE = 50;
const PAST_MESSAGES = 100;
const STYLESHEET = readFileSync(shippedPath('src/audit-console/assets/console.css'), 'utf8');

/** Every page of the console is HTML that loads nothing but our stylesheet: no script runs at all. */
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

/** Query fields of the log page, the chart and the export; all text, checked by `parseFilter`. */
const FILTER_FIELDS = ['since', 'until', 'actor', 'type', 'channel', 'user', 'message', 'order'] as const;
type FilterQuery = Partial<Record<(typeof FILTER_FIELDS)[number] | 'cursor' | 'format', string>>;
const text = (max: number) => ({ type: 'string', maxLength: max }) as const;
const filterQuerySchema = {
  type: 'object',
  properties: {
    since: text(40), until: text(40), actor: text(12), type: text(100), channel: text(12), user: text(12), message: text(12),
    order: { type: 'string', enum: ['', 'newest', 'position'] }, cursor: text(20), format: { type: 'string', enum: ['jsonl', 'csv'] },
  },
} as const;

function optionalId(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (!/^\d{1,10}$/.test(trimmed) || Number(trimmed) > 2_147_483_647) throw errors.badRequest(`Invalid ${name}`);
  return Number(trimmed);
}

/** A time from the form (a datetime-local value, taken as UTC) or ISO 8601 with a zone. */
function optionalTime(name: string, value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const trimmed = value.trim();
  const zoned = /(Z|[+-]\d{2}:?\d{2})$/i.test(trimmed) ? trimmed : `${trimmed}Z`;
  const time = Date.parse(zoned);
  if (!/^\d{4}-\d{2}-\d{2}/.test(trimmed) || Number.isNaN(time)) throw errors.badRequest(`Invalid ${name}`);
  return new Date(time).toISOString();
}

function parseFilter(query: FilterQuery, realmId: number): ConsoleFilter {
  const type = query.type?.trim();
  return {
    realmId,
    since: optionalTime('since', query.since),
    until: optionalTime('until', query.until),
    actorId: optionalId('actor', query.actor),
    types: type ? [type] : undefined,
    channelId: optionalId('channel', query.channel),
    userId: optionalId('user', query.user),
    messageId: optionalId('message', query.message),
  };
}

/** The filters as a query string (without the cursor), for links to the chart, the export and pages. */
function filterQueryString(query: FilterQuery): string {
  const out = new URLSearchParams();
  for (const field of FILTER_FIELDS) {
    const value = query[field]?.trim();
    if (value) out.set(field, value);
  }
  return out.toString();
}

/** A datetime-local input shows "YYYY-MM-DDTHH:MM:SS" in UTC. */
const formTime = (iso: string | undefined) => (iso ? iso.slice(0, 19) : '');

interface PageOptions {
  status?: number;
  page?: string;
  refresh?: number;
}

export default async function auditConsole(app: FastifyInstance, { services }: { services: AppServices }): Promise<void> {
  const { ctx } = services;
  const open = (rows: Parameters<typeof ctx.store.open>[0]) => ctx.store.open(rows);
  const jobs = new VerifyJobs(ctx.db);
  app.addHook('onClose', async () => jobs.idle());
  app.setValidatorCompiler(lazyValidatorCompiler);

  // Secure when the server's public address is HTTPS (a proxy in front terminates TLS), or the
  // connection itself is ('auto').
  const secure = ctx.config.externalUrl.startsWith('https://') ? true : 'auto';
  await app.register(cookie);
  // Double-submit: a secret in an HttpOnly cookie, a token derived from it in every form.
  await app.register(csrf, {
    sessionPlugin: '@fastify/cookie',
    cookieOpts: { path: '/audit', sameSite: 'strict', httpOnly: true, secure },
  });

  /** The signed-in user, if the session cookie is genuine and the account still active. */
  app.addHook('onRequest', async (request) => {
    const cookieValue = request.cookies[SESSION_COOKIE];
    const userId = sessionUserId(cookieValue, Date.now());
    if (userId === undefined || !request.realmRow) return;
    const user = await getUserById(ctx.db, userId);
    if (!user || !user.is_active || user.realm_id !== request.realmRow.id || !sessionValid(cookieValue!, user.api_key)) return;
    // The API's rate limit keys on request.user: the console shares the user's budget.
    request.user = user;
  });
  app.addHook('onSend', async (_request, reply) => {
    void reply.headers(SECURITY_HEADERS);
  });

  // The type filter's choices change only when a new kind of event is first written: a minute's cache
  // spares every page the recursive query (its planning alone took 20 ms on a busy machine).
  let typesCache: { at: number; types: Promise<string[]> } | undefined;
  const knownTypes = (): Promise<string[]> => {
    if (!typesCache || Date.now() - typesCache.at > 60_000) {
      const types = eventTypes(ctx.db);
      typesCache = { at: Date.now(), types };
      types.catch(() => (typesCache = undefined));
    }
    return typesCache.types;
  };

  const me = (user: UserRow | null) => (user ? { full_name: user.full_name, role: roleName(user.role) } : null);

  async function render(request: FastifyRequest, reply: FastifyReply, template: string, data: Record<string, unknown>, options: PageOptions = {}) {
    const html = await views.renderAsync(template, {
      ...data,
      me: me(request.user),
      csrf: reply.generateCsrf(),
      page: options.page,
      refresh: options.refresh,
    });
    return reply.status(options.status ?? 200).type('text/html; charset=utf-8').send(html);
  }

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    let status: number;
    let heading: string;
    let message: string;
    if (error.code?.startsWith('FST_CSRF_')) {
      status = 403;
      heading = 'Form not accepted';
      message = 'This form was not sent from a page of this console, or its security token expired (CSRF check failed). Reload the page and try again.';
    } else if (error.validation) {
      status = 400;
      heading = 'Invalid request';
      message = `Invalid parameter: ${error.message}`;
    } else {
      const apiError = error instanceof ApiError ? error : toApiError(error);
      if (apiError.status >= 500) request.log.error({ err: error }, 'audit console request failed');
      status = apiError.status;
      heading = status === 429 ? 'Too many requests' : status >= 500 ? 'Something went wrong' : 'Invalid request';
      message = apiError.message;
      void reply.headers(apiError.headers);
    }
    return render(request, reply, 'error', { title: heading, heading, message }, { status });
  });

  /** The signed-in auditor, or a reply already sent (sign-in page, or "not allowed"). */
  async function auditor(request: FastifyRequest, reply: FastifyReply, redirect = true): Promise<UserRow | undefined> {
    const user = request.user;
    if (!user) {
      if (redirect) await reply.redirect('/audit/login', 303);
      else await render(request, reply, 'error', { title: 'Sign in', heading: 'Sign in first', message: 'Your session has ended. Sign in again.' }, { status: 401 });
      return undefined;
    }
    if (!isAdminRole(user.role)) {
      await render(request, reply, 'denied', { title: 'Not allowed' }, { status: 403 });
      return undefined;
    }
    return user;
  }

  app.get('/assets/console.css', { config: { limited: true } }, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(STYLESHEET));

  app.get('/', async (_request, reply) => reply.redirect('/audit/log', 303));

  app.get('/login', async (request, reply) => {
    if (request.user && isAdminRole(request.user.role)) return reply.redirect('/audit/log', 303);
    return render(request, reply, 'login', { title: 'Sign in' });
  });

  app.post<{ Body: { email?: string; secret?: string; _csrf?: string } }>('/login', {
    schema: { body: { type: 'object', properties: { email: text(254), secret: text(200), _csrf: text(200) } } },
    preHandler: app.csrfProtection,
  }, async (request, reply) => {
    const email = request.body?.email?.trim() ?? '';
    const secret = request.body?.secret ?? '';
    const realm = request.realmRow;
    const refuse = (message: string) => render(request, reply, 'login', { title: 'Sign in', error: message, email }, { status: 401 });
    if (!realm || !email || !secret) return refuse('Your username or password is incorrect');
    const user = await getUserByEmail(ctx.db, realm.id, email, realmHost(realm));
    const keyMatches = user !== undefined && secret.length === 32 && constantTimeEqual(user.api_key, secret);
    if (!user || !(keyMatches || (await verifyPassword(secret, user.password_hash)))) return refuse('Your username or password is incorrect');
    if (!user.is_active) return refuse('Account is deactivated');
    if (!isAdminRole(user.role)) {
      request.user = null;
      return render(request, reply, 'denied', { title: 'Not allowed' }, { status: 403 });
    }
    void reply.setCookie(SESSION_COOKIE, signSession(user.id, user.api_key, Date.now()), {
      path: '/audit',
      httpOnly: true,
      sameSite: 'strict',
      secure,
      maxAge: SESSION_SECONDS,
    });
    return reply.redirect('/audit/log', 303);
  });

  app.post('/logout', { preHandler: app.csrfProtection }, async (_request, reply) => {
    void reply.clearCookie(SESSION_COOKIE, { path: '/audit', httpOnly: true, sameSite: 'strict', secure });
    return reply.redirect('/audit/login', 303);
  });

  app.get<{ Querystring: FilterQuery }>('/log', { schema: { querystring: filterQuerySchema } }, async (request, reply) => {
    const user = await auditor(request, reply);
    if (!user) return reply;
    const query = request.query;
    const filter = parseFilter(query, user.realm_id);
    const order = query.order === 'position' ? 'position' : 'newest';
    const cursor = optionalId('cursor', query.cursor);
    const [page, types] = await Promise.all([logPage(ctx.db, filter, order, cursor, PAGE_SIZE, open), knownTypes()]);
    const names = await namesFor(ctx.db, page.entries);
    const base = filterQueryString(query);
    return render(request, reply, 'log', {
      title: 'Log',
      form: {
        since: formTime(filter.since), until: formTime(filter.until), actor: query.actor ?? '', type: query.type ?? '',
        channel: query.channel ?? '', user: query.user ?? '', message: query.message ?? '', order,
      },
      types,
      query: base,
      nextQuery: page.next === null ? null : `${base}${base ? '&' : ''}cursor=${page.next}`,
      entries: page.entries.map((entry) => logRow(entry, names)),
    }, { page: 'log' });
  });

  app.get<{ Querystring: FilterQuery }>('/chart.svg', { schema: { querystring: filterQuerySchema } }, async (request, reply) => {
    const user = await auditor(request, reply, false);
    if (!user) return reply;
    const { unit, buckets } = await eventsPerPeriod(ctx.db, parseFilter(request.query, user.realm_id));
    const width = 800;
    const height = 160;
    const { bars, max } = chartBars(buckets, unit, width, height);
    const svg = await views.renderAsync('chart', {
      width, height, unit, bars, max,
      total: buckets.reduce((sum, b) => sum + b.count, 0),
      first: buckets.length === 0 ? 'no events' : periodLabel(buckets[0]!.start, unit),
      last: buckets.length === 0 ? '' : periodLabel(buckets[buckets.length - 1]!.start, unit),
    });
    return reply.type('image/svg+xml; charset=utf-8').send(svg);
  });

  app.get<{ Querystring: FilterQuery }>('/export', { schema: { querystring: filterQuerySchema } }, async (request, reply) => {
    const user = await auditor(request, reply, false);
    if (!user) return reply;
    const filter = parseFilter(request.query, user.realm_id);
    const format = request.query.format === 'csv' ? 'csv' : 'jsonl';
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    async function* lines(): AsyncGenerator<string> {
      if (format === 'csv') yield stringify([['position', 'time', 'type', 'actor_id', 'stream_id', 'stream_version', 'event_id', 'schema_version', 'hash', 'data', 'metadata']]);
      for await (const batch of filteredEvents(ctx.db, filter, open)) {
        if (format === 'jsonl') yield batch.map((e) => `${JSON.stringify(e)}\n`).join('');
        else {
          yield stringify(batch.map((e) => [e.position, String(e.metadata.time ?? ''), e.type, e.metadata.actor_id ?? '', e.stream_id, e.stream_version,
            e.event_id, e.schema_version, e.hash, JSON.stringify(e.data), JSON.stringify(e.metadata)]), { escape_formulas: true });
        }
      }
    }
    return reply
      .type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
      .header('content-disposition', `attachment; filename="audit-events-${stamp}.${format === 'csv' ? 'csv' : 'jsonl'}"`)
      .send(Readable.from(lines()));
  });

  app.get<{ Params: { id: string } }>('/messages/:id', { schema: { params: { type: 'object', properties: { id: text(12) } } } }, async (request, reply) => {
    const user = await auditor(request, reply);
    if (!user) return reply;
    const messageId = optionalId('message id', request.params.id);
    if (messageId === undefined) throw errors.badRequest('Invalid message id');
    const entries = await messageLifeEvents(ctx.db, user.realm_id, messageId, open);
    if (!entries.some((e) => e.type === 'MessageSent' && e.data.message_id === messageId)) {
      throw new ApiError('BAD_REQUEST', 404, 'The log never had this message');
    }
    const names = await namesFor(ctx.db, entries);
    return render(request, reply, 'message', {
      title: `Message ${messageId}`,
      messageId,
      deleted: entries.some((e) => e.type === 'MessagesDeleted' || e.type === 'MessagesShredded'),
      shredded: entries.some((e) => e.type === 'MessagesShredded'),
      steps: lifeSteps(messageId, entries, names),
    }, { page: 'log' });
  });

  app.get<{ Querystring: { job?: string } }>('/verify', { schema: { querystring: { type: 'object', properties: { job: text(36) } } } }, async (request, reply) => {
    const user = await auditor(request, reply);
    if (!user) return reply;
    const head = await ctx.store.head();
    const job = request.query.job ? jobs.get(request.query.job) : undefined;
    const last = jobs.last();
    return render(request, reply, 'verify', {
      title: 'Verification',
      head,
      last: last && { when: shortTime(last.finishedAt!.toISOString()), summary: jobSummary(last) },
      job: job && {
        done: job.finishedAt !== undefined,
        checked: job.checked,
        total: job.total,
        percent: job.total === 0 ? 100 : Math.floor((100 * job.checked) / job.total),
        ok: job.report?.ok === true,
        summary: jobSummary(job),
        expectedHead: job.expectedHead,
        expectedHeadFound: job.report?.expectedHeadFound === true,
      },
    }, { page: 'verify', refresh: job && job.finishedAt === undefined ? 1 : undefined });
  });

  app.post<{ Body: { expected_head?: string; _csrf?: string } }>('/verify', {
    schema: { body: { type: 'object', properties: { expected_head: text(100), _csrf: text(200) } } },
    preHandler: app.csrfProtection,
  }, async (request, reply) => {
    const user = await auditor(request, reply);
    if (!user) return reply;
    const expected = request.body?.expected_head?.trim().toLowerCase() || undefined;
    if (expected !== undefined && !/^[0-9a-f]{64}$/.test(expected)) throw errors.badRequest('A head hash is 64 hexadecimal digits');
    const head = await ctx.store.head();
    const job = jobs.start(user.id, head.position, expected);
    return reply.redirect(`/audit/verify?job=${job.id}`, 303);
  });

  app.get<{ Querystring: { at?: string; channel?: string } }>('/time-travel', {
    schema: { querystring: { type: 'object', properties: { at: text(40), channel: text(12) } } },
  }, async (request, reply) => {
    const user = await auditor(request, reply);
    if (!user) return reply;
    const at = request.query.at?.trim() ?? '';
    const channelId = optionalId('channel', request.query.channel);
    if (!at) return render(request, reply, 'time-travel', { title: 'Time travel', at, channelId }, { page: 'time-travel' });
    let point;
    try {
      point = parseReplayPoint(/^\d+$/.test(at) ? at : (optionalTime('moment', at) ?? at));
    } catch {
      throw errors.badRequest('Choose a log position (a number) or a moment in ISO 8601');
    }
    const started = Date.now();
    const position = 'time' in point ? await positionAtMoment(ctx.db, point.time) : await resolveReplayPoint(ctx.db, point);
    const { users, channels } = await pastDirectory(ctx.db, user.realm_id, position, open);
    const channel = channelId === undefined ? undefined : channels.get(channelId);
    const messages = channel ? await pastChannelMessages(ctx.db, user.realm_id, position, channel.id, PAST_MESSAGES, open) : [];
    const ms = Date.now() - started;
    const byName = <T extends { name?: string; full_name?: string }>(a: T, b: T) => (a.name ?? a.full_name ?? '').localeCompare(b.name ?? b.full_name ?? '');
    return render(request, reply, 'time-travel', {
      title: 'Time travel',
      at,
      channelId,
      past: {
        position,
        time: 'time' in point ? shortTime(point.time) : undefined,
        channels: [...channels.values()].sort(byName).map((c) => ({ ...c, subscribers: c.subscribers.size })),
        users: [...users.values()].sort(byName).map((u) => ({ ...u, role: roleName(u.role) })),
        channel,
        limit: PAST_MESSAGES,
        messages: messages.map((m) => ({ ...m, sender: users.get(m.sender_id)?.full_name ?? `user ${m.sender_id}`, time: shortTime(m.date_sent) })),
        ms,
      },
    }, { page: 'time-travel' });
  });
}

const periodLabel = (start: string, unit: 'hour' | 'day') => (unit === 'day' ? start.slice(0, 10) : `${start.slice(0, 13).replace('T', ' ')}:00 UTC`);

function jobSummary(job: VerifyJob): string {
  if (job.failure) return `The walk stopped: ${job.failure}`;
  const report = job.report;
  if (!report) return `Running: ${job.checked} of ${job.total} events checked`;
  if (report.ok) return `The chain is intact: ${report.checked} events checked, head position ${report.headPosition}, head hash ${report.headHash}.`;
  if (report.firstBrokenPosition !== undefined) return `The chain is BROKEN at position ${report.firstBrokenPosition}: ${report.reason}.`;
  return `Verification failed: ${report.reason}.`;
}

function logRow(entry: AuditEntry, names: Names) {
  const actorId = typeof entry.metadata.actor_id === 'number' ? entry.metadata.actor_id : null;
  return {
    position: entry.position,
    time: shortTime(entry.metadata.time),
    type: entry.type,
    actorId,
    actor: actorId === null ? '' : (names.users.get(actorId) ?? `user ${actorId}`),
    streamId: entry.stream_id,
    streamVersion: entry.stream_version,
    fields: dataFields(entry, names),
    metadata: JSON.stringify(entry.metadata, null, 2),
    hash: entry.hash,
    eventId: entry.event_id,
  };
}

interface LifeStep {
  kind: string;
  position: number;
  time: string;
  actorId: number | null;
  actor: string;
  title: string;
  channel?: { id: number; name: string };
  topic?: string;
  move?: string;
  content?: string;
  previous?: string;
  note?: string;
}

/** The timeline of a message's life, one step per event, in log order. */
function lifeSteps(messageId: number, entries: readonly AuditEntry[], names: Names): LifeStep[] {
  const channelOf = (id: unknown) => (typeof id === 'number' ? { id, name: names.channels.get(id) ?? `channel ${id}` } : undefined);
  const userName = (id: unknown) => (typeof id === 'number' ? (names.users.get(id) ?? `user ${id}`) : 'someone');
  return entries.map((e) => {
    const d = e.data;
    const actorId = typeof e.metadata.actor_id === 'number' ? e.metadata.actor_id : null;
    const step: LifeStep = { kind: 'other', position: e.position, time: shortTime(e.metadata.time), actorId, actor: userName(actorId), title: e.type };
    switch (e.type) {
      case 'MessageSent':
        return { ...step, kind: 'sent', title: `Sent by ${userName(d.sender_id)}`, channel: channelOf(d.stream_id), topic: d.stream_id === null ? undefined : String(d.topic), content: String(d.content ?? '') };
      case 'MessageEdited': {
        const own = d.message_id === messageId;
        const changes: string[] = [];
        if (typeof d.new_topic === 'string') changes.push(`topic “${String(d.orig_topic)}” → “${d.new_topic}”`);
        if (typeof d.new_stream_id === 'number') changes.push(`channel ${channelOf(d.stream_id)?.name ?? '?'} → ${channelOf(d.new_stream_id)!.name}`);
        const contentChanged = own && d.content !== null && d.content !== undefined;
        return {
          ...step,
          kind: changes.length > 0 ? 'moved' : 'edited',
          title: contentChanged && changes.length > 0 ? 'Edited and moved' : contentChanged ? 'Content edited' : changes.length > 0 ? 'Moved' : 'Edited',
          channel: channelOf(d.new_stream_id ?? d.stream_id),
          topic: typeof d.new_topic === 'string' ? d.new_topic : d.stream_id === null ? undefined : String(d.orig_topic),
          move: changes.length > 0 ? `${changes.join('; ')}${own ? '' : ` (with message ${String(d.message_id)}, ${String(d.propagate_mode)})`}` : undefined,
          content: contentChanged ? String(d.content) : undefined,
          previous: contentChanged && d.prev_content !== null ? String(d.prev_content) : undefined,
        };
      }
      case 'MessagesDeleted':
        return { ...step, kind: 'deleted', title: 'Deleted', note: Array.isArray(d.message_ids) && d.message_ids.length > 1 ? `With ${d.message_ids.length - 1} other messages.` : undefined };
      case 'MessagesShredded':
        return { ...step, kind: 'shredded', title: 'Shredded: its content is destroyed', note: `Reason: ${String(d.reason)}` };
      case 'ReactionAdded':
      case 'ReactionRemoved':
        return { ...step, kind: 'reaction', title: `Reaction :${String(d.emoji_name)}: ${e.type === 'ReactionAdded' ? 'added' : 'removed'} by ${userName(d.user_id)}` };
      case 'MessageFlagsChanged':
        return { ...step, kind: 'flag', title: `Flag “${String(d.flag)}” ${d.op === 'add' ? 'set' : 'cleared'} by ${userName(d.user_id)}` };
      default:
        return step;
    }
  });
}
