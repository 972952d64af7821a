import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { errors } from '../../domain/errors.js';
import { isAdminRole } from '../../domain/roles.js';
import type { UserRow } from '../../read/users.js';
import { listAuditEvents, messageLife } from '../../read/audit.js';
import type { AppServices } from '../services.js';

/** Our own extension (docs/audit-openapi.yaml): the log itself, for owners and administrators. */
export const AUDIT_PAGE_MAX = 1_000;
const AUDIT_PAGE_DEFAULT = 100;

interface AuditEventsParams {
  actor_id?: number;
  event_types?: string[];
  stream_id?: string;
  message_id?: number;
  channel_id?: number;
  user_id?: number;
  since?: string;
  until?: string;
  after: number;
  max_position?: number;
  limit: number;
}

function requireAuditor(user: UserRow): void {
  if (!isAdminRole(user.role)) throw errors.mustBeAdmin();
}

function isoTime(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const time = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(time)) throw errors.badRequest(`Invalid ${name}`);
  return new Date(time).toISOString();
}

export default async function auditRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute<AuditEventsParams>(app, {
    method: 'GET',
    url: '/audit/events',
    params: {
      properties: {
        actor_id: { type: 'integer' },
        event_types: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 100 }, maxItems: 100 },
        stream_id: { type: 'string', minLength: 1, maxLength: 500 },
        message_id: { type: 'integer' },
        channel_id: { type: 'integer' },
        user_id: { type: 'integer' },
        since: { type: 'string', maxLength: 40 },
        until: { type: 'string', maxLength: 40 },
        after: { type: 'integer', minimum: 0, default: 0 },
        max_position: { type: 'integer', minimum: 0 },
        limit: { type: 'integer', minimum: 1, maximum: AUDIT_PAGE_MAX, default: AUDIT_PAGE_DEFAULT },
      },
    },
    handler: async ({ params, user, realm }) => {
      requireAuditor(user);
      // Each aggregate filter names a stream of the log; together they are alternatives (OR).
      const streamIds = [
        params.stream_id,
        params.message_id !== undefined ? `message-${params.message_id}` : undefined,
        params.channel_id !== undefined ? `channel-${params.channel_id}` : undefined,
        params.user_id !== undefined ? `user-${params.user_id}` : undefined,
      ].filter((s): s is string => s !== undefined);
      const since = isoTime('since', params.since);
      const until = isoTime('until', params.until);
      const events = await listAuditEvents(ctx.db, {
        realmId: realm.id,
        actorId: params.actor_id,
        types: params.event_types,
        streamIds,
        since,
        until,
        after: params.after,
        maxPosition: params.max_position,
        limit: params.limit,
      }, (rows) => ctx.store.open(rows));
      const head = await ctx.store.head();
      return {
        events,
        // Another page may follow only when this one is full.
        next_after: events.length === params.limit ? events[events.length - 1]!.position : null,
        head_position: head.position,
      };
    },
  });

  defineRoute<{ message_id: number }>(app, {
    method: 'GET',
    url: '/audit/messages/:message_id',
    params: { properties: { message_id: { type: 'integer' } }, required: ['message_id'] },
    handler: async ({ params, user, realm }) => {
      requireAuditor(user);
      const life = await messageLife(ctx.db, realm.id, params.message_id, (rows) => ctx.store.open(rows));
      if (!life) throw errors.badRequest('Invalid message(s)');
      return { ...life };
    },
  });
}
