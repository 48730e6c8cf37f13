import { createHash } from 'node:crypto';
import type pg from 'pg';

/**
 * Distinct statements one connection prepares at most. PostgreSQL keeps every prepared statement,
 * with its plan, until its backend ends: about 0.12 MB for a task list's, whose text differs with
 * each combination of filters, so 500 of them grew a backend past 60 MB (issue 36 item 10). This
 * many keep a backend under 16 MB whatever mix of lists callers send (bench/README.md, "Prepared
 * statements per backend"), and hold the statements a whole walk of the API sends most often.
 */
export const MAX_PREPARED_PER_CONNECTION = 64;

/**
 * Names for prepared statements, through pg's public `{ name, text, values }`: PostgreSQL parses
 * and plans each text once per connection instead of on every call (planning Baton's task
 * statements costs about as much as running them). The name is a hash of the text, so pg sends
 * Parse only the first time a connection sees it.
 *
 * A migration run by another instance or an operator can change what a prepared statement
 * answers; PostgreSQL then refuses it (`0A000`, "cached plan must not change result type"), on
 * every connection that prepared it. The first such failure starts a new generation of names, so
 * every later call prepares afresh and succeeds: one request fails (with a retryable problem), not
 * every request until a restart.
 */
export interface PreparedStatements {
  /** The statement to send for `text` on `client`: named while the connection may still prepare, else unnamed. */
  statement(client: pg.PoolClient, text: string, values: unknown[]): pg.QueryConfig;
  /** Hears a failed statement; a stale prepared statement starts a new generation of names. */
  failed(error: unknown): void;
  /**
   * True once `client` was sent a new text past `MAX_PREPARED_PER_CONNECTION` (that one went
   * unnamed): it is closed when released, and the pool opens a fresh connection, on which the
   * statements in use are prepared again, rather than running every later new text unplanned.
   */
  full(client: pg.PoolClient): boolean;
}

export function preparedStatements(enabled: boolean): PreparedStatements {
  let generation = 0;
  const namesByClient = new WeakMap<pg.PoolClient, Set<string>>();
  const full = new WeakSet<pg.PoolClient>();
  return {
    statement(client, text, values) {
      if (!enabled || values.length === 0) return { text, values };
      const name = `baton_${generation}_${createHash('sha1').update(text).digest('base64url')}`;
      let names = namesByClient.get(client);
      if (!names) namesByClient.set(client, (names = new Set()));
      if (!names.has(name)) {
        if (names.size >= MAX_PREPARED_PER_CONNECTION) {
          full.add(client);
          return { text, values };
        }
        names.add(name);
      }
      return { name, text, values };
    },
    failed(error) {
      if (isStalePlan(error)) generation++;
    },
    full: (client) => full.has(client),
  };
}

/** PostgreSQL refused a prepared statement that DDL made stale, or one the connection no longer has. */
function isStalePlan(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '26000' || (code === '0A000' && /cached plan must not change result type/.test(String((error as Error).message)));
}
