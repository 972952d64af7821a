import type { FastifyInstance } from 'fastify';
import pino from 'pino';

/**
 * Log lines gathered before one write. A write per line (pino's default) cost several percent of a cheap
 * request's CPU (bench/logging.ts); a buffer of a few kilobytes writes once per ~20 lines. pino flushes it when
 * the process exits; only a kill -9 loses what it holds (request lines, never the event log).
 */
const LOG_BUFFER_BYTES = 4096;
/** How often waiting lines are written when the buffer does not fill. */
const LOG_FLUSH_MS = 1000;

/**
 * The server's log: JSON lines for machines, or one readable line per entry (pino-pretty) when the
 * output is a terminal. Nothing secret or personal is ever logged: requests are logged by path only
 * (a query string can hold an API key or a search for message text), and never with headers.
 */
export function serverLoggerOptions(level: string, terminal = process.stdout.isTTY === true): object {
  if (terminal) return { level, transport: { target: 'pino-pretty', options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } };
  return { level, stream: bufferedStdout() };
}

/** Standard output through a buffer that is written when full, and within a second or two while lines wait. */
function bufferedStdout(): pino.DestinationStream {
  const stream = pino.destination({ dest: 1, sync: false, minLength: LOG_BUFFER_BYTES });
  // Flushed on the two ticks after a line: a flush that finds a write in flight does nothing, and the next
  // one writes what was left behind.
  let ticksSinceLine = 2;
  const write = stream.write.bind(stream);
  stream.write = (line: string) => {
    ticksSinceLine = 0;
    return write(line);
  };
  setInterval(() => {
    if (ticksSinceLine++ < 2) stream.flush();
  }, LOG_FLUSH_MS).unref();
  return stream;
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
