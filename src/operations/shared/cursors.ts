import { createHmac, timingSafeEqual } from 'node:crypto';
import { BatonError } from '../../errors.ts';

/** What a cursor walks: a cursor from one list is refused by another. */
export type CursorKind = 'tasks' | 'events' | 'leases' | 'approvals' | 'agents' | 'directory' | 'tokens' | 'webhooks' | 'deliveries' | 'comments' | 'task_search' | 'schedules' | 'reservations' | 'sessions' | 'asks' | 'inbox' | 'wait' | 'runs' | 'budgets' | 'templates' | 'notifications' | 'exports';

/**
 * The cursors of every list, signed with the server's cursor key (spec/api.md, "Pagination"): a
 * cursor is opaque and tamper-evident, so one the server did not issue, changed by a byte, is a
 * 400 before anything in it reaches SQL.
 */
export interface Cursors {
  /** The cursor for `position` in a list of `kind`. */
  encode(kind: CursorKind, position: string): string;
  /**
   * The position inside a cursor this server issued for a `kind` list; undefined without a cursor.
   * Anything else (forged, mutated, truncated, another list's, or issued before cursors were
   * signed) is a 400 `invalid_parameter` naming `cursor`.
   */
  decode(kind: CursorKind, cursor: string | undefined): string | undefined;
}

const ID = (prefix: string) => new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`);
const TASK_ID = ID('tsk');
const id = (prefix: string) => {
  const pattern = ID(prefix);
  return (p: string) => pattern.test(p);
};
const INT8_MAX = 9223372036854775807n;
/** An event's seq (int8): positive and within PostgreSQL's bigint. */
const seq = (p: string) => /^[1-9][0-9]{0,18}$/.test(p) && BigInt(p) <= INT8_MAX;
/** The largest finite float4 (`real`), the type of a search rank. */
const FLOAT4_MAX = 3.4028234663852886e38;

/**
 * A ranked search's position: the rank as PostgreSQL printed it (a non-negative, finite float4), the
 * task id, then the digest of the `q` that ranked it (a rank means nothing under another query).
 */
function searchPosition(p: string): boolean {
  const [rank = '', id = '', digest = '', ...rest] = p.split(' ');
  const value = Number(rank);
  return rest.length === 0 && /^[0-9]+(\.[0-9]+)?(e[+-]?[0-9]{1,2})?$/.test(rank) && Number.isFinite(value) && value <= FLOAT4_MAX && TASK_ID.test(id) && /^[0-9a-f]{16}$/.test(digest);
}

/** The shape of each kind's position, checked even on a signed cursor (a key that leaked must not reach SQL either). */
const POSITION: Record<CursorKind, (position: string) => boolean> = {
  tasks: id('tsk'),
  events: seq,
  leases: id('lea'),
  approvals: id('apr'),
  agents: id('agt'),
  directory: id('agt'),
  tokens: id('tok'),
  webhooks: id('whk'),
  deliveries: seq,
  comments: id('cmt'),
  task_search: searchPosition,
  schedules: id('sch'),
  templates: id('tpl'),
  reservations: id('res'),
  runs: id('lea'),
  sessions: id('ses'),
  asks: id('ask'),
  inbox: id('inb'),
  wait: seq,
  budgets: id('bdg'),
  // An outbox row: its inbox item and channel.
  // An export's dataset and its last row: a run's lease, or an event's seq and the seq the export reads up to.
  exports: (p) => {
    const [dataset, at, through, ...rest] = p.split(' ');
    if (rest.length > 0 || at === undefined) return false;
    return dataset === 'events' ? through !== undefined && seq(at) && (through === '0' || seq(through)) : (dataset === 'runs' || dataset === 'usage') && through === undefined && id('lea')(at);
  },
  notifications: (p) => /^inb_[0-9A-HJKMNP-TV-Z]{26} (email|chat)$/.test(p),
};

/** Bytes of HMAC-SHA256 a cursor carries: 128 bits, as many as a forger must guess. */
const TAG_BYTES = 16;

/** The cursors signed and checked with `key` (every instance on a database holds the same one). */
export function cursorCodec(key: Uint8Array): Cursors {
  const tag = (body: string) => createHmac('sha256', key).update(body).digest().subarray(0, TAG_BYTES);
  return {
    encode(kind, position) {
      const body = Buffer.from(JSON.stringify({ k: kind, p: position })).toString('base64url');
      return `${body}.${tag(body).toString('base64url')}`;
    },
    decode(kind, cursor) {
      if (cursor === undefined) return undefined;
      const [body = '', signature, ...rest] = cursor.split('.');
      if (signature === undefined || rest.length > 0) throw refused(kind, 'not a cursor this server issued (or one issued before cursors were signed)');
      const given = Buffer.from(signature, 'base64url');
      if (given.length !== TAG_BYTES || given.toString('base64url') !== signature || !timingSafeEqual(given, tag(body))) {
        throw refused(kind, 'not a cursor this server issued: its signature does not match');
      }
      const position = positionOf(body, kind);
      if (position === undefined) throw refused(kind, `not a cursor issued by this ${kind} list`);
      return position;
    },
  };
}

/** The position of a signed body, when it names one of `kind`'s shape. */
function positionOf(body: string, kind: CursorKind): string | undefined {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    if (parsed && typeof parsed === 'object' && 'k' in parsed && 'p' in parsed && parsed.k === kind && typeof parsed.p === 'string' && POSITION[kind](parsed.p)) {
      return parsed.p;
    }
  } catch {
    // a signed body is always JSON; the caller refuses it all the same
  }
  return undefined;
}

function refused(kind: CursorKind, detail: string): BatonError {
  return new BatonError('invalid_parameter', `cursor is not one this ${kind} list issued.`, {
    hint: 'Pass the next_cursor of a previous page of the same list unchanged, or omit cursor to start from the first page.',
    extra: { errors: [{ pointer: '/cursor', detail, location: 'query' }] },
  });
}
