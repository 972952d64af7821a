// One webhook request: what each way of ending becomes (the real server's requests exceptions),
// and the refusal of private networks (its outgoing proxy's 407), against loopback servers.
import t, { type Test } from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDisallowedAddress, postWebhook } from '../../../src/services/outgoing-webhooks/http-call.js';

async function server(t: Test, handler: http.RequestListener): Promise<number> {
  const s = http.createServer(handler);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    s.closeAllConnections();
    return new Promise<void>((resolve) => s.close(() => resolve()));
  });
  return (s.address() as AddressInfo).port;
}

const json = { kind: 'json', value: { a: 1 } } as const;
const open = { timeoutMs: 2_000, allowPrivateNetworks: true };

t.test('answers, refusals and errors', async (t) => {
  let seen = '';
  const port = await server(t, (req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen = body;
      if (req.url === '/big') return void res.end('x'.repeat(5000));
      if (req.url === '/slow') return;
      res.writeHead(req.url === '/teapot' ? 418 : 200);
      res.end('{"content": "hi"}');
    });
  });
  const ok = await postWebhook(`http://127.0.0.1:${port}/`, json, open);
  t.match(ok, { kind: 'response', status: 200 });
  t.equal(ok.kind === 'response' && ok.body.toString(), '{"content": "hi"}');
  t.equal(seen, '{"a":1}');
  t.match(await postWebhook(`http://127.0.0.1:${port}/teapot`, { kind: 'form', fields: [['a', 1], ['b', 'x y']] }, open), { kind: 'response', status: 418 });
  t.equal(seen, 'a=1&b=x+y');
  t.same(await postWebhook(`http://127.0.0.1:${port}/slow`, json, { ...open, timeoutMs: 100 }), { kind: 'timeout' });
  t.match(await postWebhook(`http://127.0.0.1:${port}/big`, json, { ...open, maxResponseBytes: 1000 }), { kind: 'exception', type: 'ContentTooLarge' });

  t.same(await postWebhook('http://127.0.0.1:1/', json, open), { kind: 'connection' }, 'nothing listening');

  // Loopback by name or by address: refused unless allowed, without a request.
  seen = '';
  for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
    const refused = await postWebhook(`http://${host}/`, json, { timeoutMs: 2_000, allowPrivateNetworks: false });
    t.match(refused, { kind: 'response', status: 407 }, host);
  }
  t.equal(seen, '', 'no request reached the server');

  t.same(await postWebhook('', json, open), { kind: 'exception', type: 'MissingSchema', message: "Invalid URL '': No scheme supplied. Perhaps you meant https://?" });
  t.same(await postWebhook('ftp://example.com/x', json, open), { kind: 'exception', type: 'InvalidSchema', message: "No connection adapters were found for 'ftp://example.com/x'" });
});

t.test('private addresses', async (t) => {
  for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::']) {
    t.ok(isDisallowedAddress(a), a);
  }
  for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8']) t.notOk(isDisallowedAddress(a), a);
});
