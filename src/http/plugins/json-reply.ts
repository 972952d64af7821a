import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { jsonText } from '../../eventstore/json-text.js';

/** Replies are JSON that may carry log data nested deeper than JSON.stringify can write (the audit API). */
async function jsonReplyPlugin(app: FastifyInstance) {
  app.setReplySerializer((payload) => jsonText(payload));
}

export default fp(jsonReplyPlugin, { name: 'json-reply' });
