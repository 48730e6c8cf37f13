import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Mail {
  readonly to: string[];
  readonly subject: string;
  /** The text body, quoted-printable decoded. */
  readonly text: string;
}

/** A real SMTP server on 127.0.0.1 that keeps what it receives; `failNext` makes it refuse the next message with 451. */
export interface MailReceiver {
  readonly url: string;
  readonly mails: Mail[];
  failNext: number;
  close(): Promise<void>;
}

export async function startMailReceiver(): Promise<MailReceiver> {
  const receiver = { mails: [] as Mail[], failNext: 0 };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (receiver.failNext > 0) {
          receiver.failNext--;
          callback(Object.assign(new Error('try again later'), { responseCode: 451 }));
          return;
        }
        receiver.mails.push(parse(Buffer.concat(chunks).toString('utf8'), session.envelope.rcptTo.map((r) => r.address)));
        callback();
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const { port } = server.server.address() as AddressInfo;
  return Object.assign(receiver, { url: `smtp://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
}

/** Enough of RFC 5322 and quoted-printable for the single-part text mails Baton sends. */
function parse(raw: string, to: string[]): Mail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1] ?? '';
  const qp = /quoted-printable/i.test(header('Content-Transfer-Encoding'));
  const text = qp ? Buffer.from(body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8') : body;
  return { to, subject: header('Subject'), text: text.replace(/\r\n/g, '\n') };
}

/** A local HTTP receiver for chat webhooks at `path` (a provider's URL shape); `status` is what it answers. */
export interface ChatReceiver {
  readonly url: string;
  readonly bodies: unknown[];
  status: number;
  close(): Promise<void>;
}

export async function startChatReceiver(path = '/hooks/chat'): Promise<ChatReceiver> {
  const receiver = { bodies: [] as unknown[], status: 200 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (receiver.status < 300) receiver.bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(receiver.status).end('ok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, { url: `http://127.0.0.1:${port}${path}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
}
