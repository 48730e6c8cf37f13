import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import ipaddr from 'ipaddr.js';
import { BatonError } from './errors.ts';
import { allowsPrivate, type PrivateAllowance } from './private-allowance.ts';

/** A webhook URL and the one address it was checked at; requests connect to exactly that address. */
export interface Destination {
  readonly url: URL;
  readonly address: string;
  readonly family: 4 | 6;
}

/**
 * Parses and resolves a webhook URL. Refuses (`webhook_url_refused`) anything but http(s) without
 * credentials, hosts that do not resolve, and hosts with ANY address outside public unicast
 * (loopback, private, link-local — which holds cloud metadata —, unique-local, CGNAT, reserved…)
 * unless `allowPrivate` allows each of them (all, or those in its networks or at its host names).
 * Called at creation and before every attempt, against DNS rebinding: the request then connects to
 * the address checked here.
 */
export async function resolveDestination(raw: string, allowPrivate: PrivateAllowance): Promise<Destination> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refused(raw, 'it is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refused(raw, `the scheme ${url.protocol} is not http or https`);
  if (url.username || url.password) throw refused(raw, 'it carries credentials; sign requests with the webhook secret instead');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = await lookup(host, { all: true, verbatim: true }).catch(() => []);
  const first = addresses[0];
  if (!first) throw refused(raw, `${host} does not resolve`);
  for (const { address } of addresses) {
    const why = nonPublic(address);
    if (why && !allowsPrivate(allowPrivate, host, address)) throw refused(raw, `${host} resolves to ${address}, ${why}${allowPrivate === false ? '' : ' outside BATON_WEBHOOK_ALLOW_PRIVATE'}`);
  }
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}

/**
 * Why an address is not public unicast (`a loopback address`, `which embeds 10.0.0.1, a private
 * address`), or null when it is. An IPv6 address that carries an IPv4 address a packet to it
 * reaches is judged by that IPv4 address: IPv4-compatible `::a.b.c.d`, IPv4-mapped
 * `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`
 * (bits 16–47) and Teredo `2001::/32` (the client, the last 32 bits inverted).
 */
export function nonPublic(address: string): string | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(address)) return rangeWhy(ipaddr.IPv4.parse(address), '');
  // The WHATWG URL parser writes every IPv6 form in canonical hex (ipaddr.js reads `::a.b.c.d` as `::ffff:a.b.c.d`).
  const hex = new URL(`http://[${address.replace(/%.*$/, '')}]/`).hostname.slice(1, -1);
  const v6 = ipaddr.IPv6.parse(hex);
  const range = v6.range();
  if (range === 'unspecified' || range === 'loopback') return `a ${range} address`;
  const v4 = embeddedIPv4(v6.parts);
  if (v4) return rangeWhy(v4, `which embeds ${v4.toString()},`);
  return range === 'unicast' ? null : `a ${range} address`;
}

function rangeWhy(address: ipaddr.IPv4, prefix: string): string | null {
  const range = address.range();
  if (range === 'unicast') return null;
  return prefix === '' ? `a ${range} address` : `${prefix} a ${range} address`;
}

function embeddedIPv4(parts: readonly number[]): ipaddr.IPv4 | null {
  const [p0 = 0, p1 = 0, p2 = 0, p3 = 0, p4 = 0, p5 = 0, p6 = 0, p7 = 0] = parts;
  const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  const zeroTo = (end: number) => parts.slice(0, end).every((part) => part === 0);
  // ::a.b.c.d (compatible), ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (translated)
  if (zeroTo(4) && ((p4 === 0 && (p5 === 0 || p5 === 0xffff)) || (p4 === 0xffff && p5 === 0))) return v4(p6, p7);
  if (p0 === 0x64 && p1 === 0xff9b && p2 === 0 && p3 === 0 && p4 === 0 && p5 === 0) return v4(p6, p7);
  if (p0 === 0x2002) return v4(p1, p2);
  if (p0 === 0x2001 && p1 === 0) return v4(p6 ^ 0xffff, p7 ^ 0xffff);
  return null;
}

function refused(url: string, why: string): BatonError {
  return new BatonError('webhook_url_refused', `Webhook URL ${url} is refused: ${why}.`, {
    extra: { errors: [{ pointer: '/url', detail: why, location: 'body' }] },
  });
}

/**
 * POSTs `body` to the destination's checked address (never re-resolving the name), follows no
 * redirect, and answers the response status; network failures and the timeout reject.
 */
export function postTo(destination: Destination, body: string, headers: Record<string, string>, timeoutMs: number): Promise<number> {
  const { url, address, family } = destination;
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = transport.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'Baton-Webhooks/1' },
        timeout: timeoutMs,
        lookup: (_host, options, callback) => {
          if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
          else callback(null, address, family);
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no response within ${timeoutMs} ms`)));
    request.on('error', reject);
    request.end(body);
  });
}
