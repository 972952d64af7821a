import type { TestServer, TestUser } from './server.js';

// A valid 1x1 PNG.
export const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

function multipart(files: Array<{ field: string; data: Buffer }>, fields: Record<string, string>) {
  const boundary = `----avatar${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  for (const f of files) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${f.field}"; filename="me.png"\r\nContent-Type: image/png\r\n\r\n`));
    chunks.push(f.data, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Sends files (and `fields`) as multipart/form-data, the way clients upload avatars. */
export async function sendFiles(
  s: TestServer, as: TestUser, method: 'POST' | 'PATCH', url: string, files: Array<{ field: string; data: Buffer }>, fields: Record<string, string> = {},
) {
  const { payload, contentType } = multipart(files, fields);
  const r = await s.fastify.inject({ method, url: `/api/v1${url}`, headers: { 'content-type': contentType, authorization: as.auth }, payload });
  return { status: r.statusCode, body: r.json() };
}
