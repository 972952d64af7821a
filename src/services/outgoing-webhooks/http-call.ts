import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { ZULIP_VERSION } from '../../version.js';

/** What a webhook is sent: Zulip's generic interface posts JSON, the Slack one a form. */
export type WebhookBody = { kind: 'json'; value: unknown } | { kind: 'form'; fields: ReadonlyArray<readonly [string, string | number]> };

/**
 * How a call ended, in the terms of the real server's handling (zerver/lib/outgoing_webhook.py):
 * a response of any status, a timeout or a connection error (both tried again), or another error,
 * named by the exception type the real server's HTTP library would raise.
 */
export type CallOutcome =
  | { kind: 'response'; status: number; body: Buffer }
  | { kind: 'timeout' }
  | { kind: 'connection' }
  | { kind: 'exception'; type: string; message: string };

export interface CallOptions {
  timeoutMs: number;
  /** false in production: addresses of private networks, loopback included, are refused. */
  allowPrivateNetworks: boolean;
  maxResponseBytes?: number;
}

const USER_AGENT = `ZulipOutgoingWebhook/${ZULIP_VERSION}`;
const MAX_RESPONSE_BYTES = 1024 * 1024;

/**
 * Where a webhook may not post unless private networks are allowed: what the real server's
 * outgoing proxy (Smokescreen) refuses by default. Its refusal is a 407 answer, which the real
 * server reports as "a private or disallowed network"; this answers the same way.
 */
const DISALLOWED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) DISALLOWED.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) DISALLOWED.addSubnet(network, prefix, 'ipv6');

export function isDisallowedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return DISALLOWED.check(mapped[1]!, 'ipv4');
  return DISALLOWED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

class Disallowed extends Error {}

/** A DNS look-up that refuses private addresses: the connection then goes to the address checked. */
function guardedLookup(hostname: string, options: LookupOptions, callback: (...args: any[]) => void): void {
  dnsLookup(hostname, { ...options }, (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => {
    if (error) return callback(error);
    const addresses = Array.isArray(address) ? address.map((a) => a.address) : [address];
    if (addresses.some(isDisallowedAddress)) return callback(new Disallowed());
    callback(null, address, family);
  });
}

/** The URL as the real server's HTTP library reads it, or the exception it raises. */
function parseUrl(url: string): URL | { kind: 'exception'; type: string; message: string } {
  if (!/^[a-z][a-z0-9+.-]*:/i.test(url)) {
    return { kind: 'exception', type: 'MissingSchema', message: `Invalid URL '${url}': No scheme supplied. Perhaps you meant https://${url}?` };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { kind: 'exception', type: 'InvalidURL', message: `Invalid URL '${url}'` };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return { kind: 'exception', type: 'InvalidSchema', message: `No connection adapters were found for '${url}'` };
  }
  return parsed;
}

function encodeBody(body: WebhookBody): { type: string; bytes: Buffer } {
  if (body.kind === 'json') return { type: 'application/json', bytes: Buffer.from(JSON.stringify(body.value)) };
  const form = new URLSearchParams();
  for (const [name, value] of body.fields) form.append(name, String(value));
  return { type: 'application/x-www-form-urlencoded', bytes: Buffer.from(form.toString()) };
}

/** POSTs `body` to `url` once; redirects are not followed (a 3xx is an answer like any other). */
export function postWebhook(url: string, body: WebhookBody, options: CallOptions): Promise<CallOutcome> {
  const parsed = parseUrl(url);
  if (!(parsed instanceof URL)) return Promise.resolve(parsed);
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!options.allowPrivateNetworks && isIP(host) !== 0 && isDisallowedAddress(host)) {
    return Promise.resolve({ kind: 'response', status: 407, body: Buffer.alloc(0) });
  }
  const { type, bytes } = encodeBody(body);
  const limit = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  return new Promise<CallOutcome>((resolve) => {
    const request = (parsed.protocol === 'https:' ? https : http).request(parsed, {
      method: 'POST',
      headers: { 'content-type': type, 'content-length': bytes.length, 'user-agent': USER_AGENT },
      ...(options.allowPrivateNetworks ? {} : { lookup: guardedLookup as never }),
    });
    // Why the request was cut short, whichever of the request's or the response's events reports it.
    let cut: 'timeout' | 'too large' | undefined;
    const timer = setTimeout(() => {
      cut = 'timeout';
      request.destroy();
    }, options.timeoutMs);
    let settled = false;
    const finish = (outcome: CallOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const failed = (error?: unknown): CallOutcome =>
      cut === 'timeout' ? { kind: 'timeout' }
        : cut === 'too large' ? { kind: 'exception', type: 'ContentTooLarge', message: `The response is larger than ${limit} bytes.` }
          : error instanceof Disallowed ? { kind: 'response', status: 407, body: Buffer.alloc(0) }
            : { kind: 'connection' };
    request.on('error', (error) => finish(failed(error)));
    request.on('close', () => finish(failed()));
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= limit) return void chunks.push(chunk);
        cut = 'too large';
        request.destroy();
      });
      response.on('end', () => finish(cut ? failed() : { kind: 'response', status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
      response.on('error', (error) => finish(failed(error)));
      response.on('close', () => finish(failed()));
    });
    request.end(bytes);
  });
}
