/** The benchmarks' HTTP client: node's http over one keep-alive agent (fetch costs the client more CPU). */
import http from 'node:http';

const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

export interface Reply { status: number; text: string }

/** One request to 127.0.0.1:port; `body` is sent form-encoded. */
export function request(port: number, method: string, url: string, auth?: string, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: url, agent, headers: {
      ...(auth ? { authorization: auth } : {}),
      ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } : {}),
    } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** One API call's JSON answer; any status but 200 is an error. */
export async function callJson(port: number, method: string, url: string, auth?: string, body?: Record<string, string>): Promise<any> {
  const reply = await request(port, method, url, auth, body ? new URLSearchParams(body).toString() : undefined);
  if (reply.status !== 200) throw new Error(`${method} ${url}: ${reply.status} ${reply.text}`);
  return JSON.parse(reply.text);
}

/** Closes the kept-alive sockets, so the benchmark process can exit. */
export const closeConnections = (): void => agent.destroy();

export const basic = (email: string, key: string) => `Basic ${Buffer.from(`${email}:${key}`).toString('base64')}`;
