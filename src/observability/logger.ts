import type { FastifyInstance } from 'fastify';

/**
 * The server's log: JSON lines for machines, or one readable line per entry (pino-pretty) when the
 * output is a terminal. Nothing secret or personal is ever logged: requests are logged by path only
 * (a query string can hold an API key or a search for message text), and never with headers.
 */
export function serverLoggerOptions(level: string, terminal = process.stdout.isTTY === true): object {
  return {
    level,
    ...(terminal ? { transport: { target: 'pino-pretty', options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } } : {}),
  };
}

/** The path of a request URL without its query string. */
export const pathOf = (url: string) => {
  const end = url.indexOf('?');
  return end < 0 ? url : url.slice(0, end);
};

/**
 * One line per answered request (fastify's own request logging writes two, with the full URL):
 * method, path, status and time, at info level.
 */
export function logRequests(fastify: FastifyInstance): void {
  fastify.addHook('onResponse', async (request, reply) => {
    request.log.info(
      { method: request.method, path: pathOf(request.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
      'request',
    );
  });
}
