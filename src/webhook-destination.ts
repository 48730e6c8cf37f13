import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import ipaddr from 'ipaddr.js';
import { BatonError } from './errors.ts';

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
 * unless `allowPrivate`. Called at creation and before every attempt, against DNS rebinding.
 */
export async function resolveDestination(raw: string, allowPrivate: boolean): Promise<Destination> {
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
  if (!allowPrivate) {
    for (const { address } of addresses) {
      const range = ipaddr.process(address).range();
      if (range !== 'unicast') throw refused(raw, `${host} resolves to ${address}, a ${range} address`);
    }
  }
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
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
