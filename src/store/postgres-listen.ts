import pg from 'pg';
import type { HostRotation } from '../postgres-hosts.ts';
import { type PostgresTimeouts, readOnlyHost, takesWrites } from './postgres-pool.ts';

const RELISTEN_DELAY_MS = 1000;

interface Channel {
  readonly listeners: Set<() => void>;
  /** Settles once the channel is LISTENed on the current connection (or that failed). */
  ready: Promise<void>;
}

/** `Database.listen` on PostgreSQL, and the connection's close. */
export interface Notifications {
  listen: (channel: string, onNotify: () => void) => Promise<() => Promise<void>>;
  close: () => Promise<void>;
}

/**
 * One LISTEN connection for every channel of a database, opened on the first `listen` and kept
 * until `close`. A channel is LISTENed while it has a listener and UNLISTENed when its last one
 * stops, so writes notify an instance only while it needs the wake-ups. After a drop the
 * connection is re-opened, its channels LISTENed again, and their listeners called once, since
 * notifies may have been missed meanwhile.
 */
export function postgresNotifications(rotation: HostRotation, timeouts: PostgresTimeouts): Notifications {
  const channels = new Map<string, Channel>();
  let client: pg.Client | undefined;
  let connecting: Promise<void> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;

  const send = (target: pg.Client, verb: 'LISTEN' | 'UNLISTEN', channel: string) => target.query(`${verb} ${pg.escapeIdentifier(channel)}`).then(() => undefined);
  const reconnect = () => {
    if (closed || retry || channels.size === 0) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect().then(() => {
        for (const { listeners } of channels.values()) for (const listener of listeners) listener();
      }, reconnect);
    }, RELISTEN_DELAY_MS);
  };
  const connect = () =>
    (connecting ??= (async () => {
      const host = rotation.current();
      const next = new pg.Client({ connectionString: rotation.hosts.urls[host], connectionTimeoutMillis: timeouts.connectMs });
      next.on('notification', (message) => {
        for (const listener of channels.get(message.channel)?.listeners ?? []) listener();
      });
      const dropped = () => {
        if (client !== next) return;
        client = undefined;
        next.end().catch(() => undefined);
        reconnect();
      };
      next.on('error', dropped);
      next.on('end', dropped);
      try {
        await next.connect();
        if (closed) throw new Error('the database is closed');
        // A standby refuses LISTEN; with several hosts, the next one is tried on the retry.
        if (rotation.hosts.readWrite && !(await takesWrites(next))) throw readOnlyHost();
      } catch (error) {
        if (!closed) rotation.passOver(host);
        await next.end().catch(() => undefined);
        throw error;
      } finally {
        connecting = undefined;
      }
      client = next;
      // Channels added from now on LISTEN themselves; these were waiting for the connection.
      for (const [name, channel] of channels) channel.ready = send(next, 'LISTEN', name);
      await Promise.all([...channels.values()].map((c) => c.ready));
    })());

  return {
    async listen(name, onNotify) {
      if (closed) throw new Error('the database is closed');
      const listener = () => onNotify();
      let channel = channels.get(name);
      if (!channel) {
        channel = { listeners: new Set(), ready: client ? send(client, 'LISTEN', name) : connect() };
        channels.set(name, channel);
      }
      const own = channel;
      own.listeners.add(listener);
      const stop = async () => {
        if (!own.listeners.delete(listener) || own.listeners.size > 0 || channels.get(name) !== own) return;
        channels.delete(name);
        if (client) await send(client, 'UNLISTEN', name).catch(() => undefined);
      };
      try {
        await own.ready;
      } catch (error) {
        await stop();
        throw error;
      }
      return stop;
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      channels.clear();
      await connecting?.catch(() => undefined);
      const last = client;
      client = undefined;
      await last?.end();
    },
  };
}
