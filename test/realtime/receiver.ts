import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got, with the outcome of verifying its signature. */
export interface Delivery {
  readonly path: string;
  readonly id: string;
  readonly verified: boolean;
  readonly status: number;
  readonly body: { id: string; type: string; subject: string };
  readonly headers: IncomingHttpHeaders;
}

export interface Receiver {
  readonly url: string;
  readonly deliveries: Delivery[];
  /** The secret to verify `path` with (from the webhook's creation response). */
  trust(path: string, secret: string): void;
  /** Statuses to answer on `path`, in order; 200 once they run out. */
  script(path: string, statuses: number[]): void;
  close(): Promise<void>;
}

/** A local HTTP receiver on `host` (a loopback address) that verifies every request with the `standardwebhooks` package. */
export async function startReceiver(host = '127.0.0.1'): Promise<Receiver> {
  const secrets = new Map<string, string>();
  const scripts = new Map<string, number[]>();
  const deliveries: Delivery[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      const body = Buffer.concat(chunks).toString('utf8');
      const status = scripts.get(path)?.shift() ?? 200;
      deliveries.push({ path, id: String(request.headers['webhook-id']), verified: verify(secrets.get(path), body, request.headers), status, body: JSON.parse(body) as Delivery['body'], headers: request.headers });
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    deliveries,
    trust: (path, secret) => secrets.set(path, secret),
    script: (path, statuses) => scripts.set(path, [...statuses]),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function verify(secret: string | undefined, body: string, headers: IncomingHttpHeaders): boolean {
  if (!secret) return false;
  try {
    new Webhook(secret).verify(body, headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}
