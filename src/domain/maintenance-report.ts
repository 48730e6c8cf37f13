/** A pass's own report plus `ok`; a failed pass is only `{ ok: false }` (the error goes to the log). */
export type PassResult = { readonly ok: boolean } & Readonly<Record<string, unknown>>;

/** What one maintenance run did, as `/cron/keepalive` answers it: the workers make it, the REST adapter serves it. */
export interface MaintenanceReport {
  /** True when the database answered and every pass finished. */
  ok: boolean;
  database: 'ok' | 'unreachable';
  passes: Record<string, PassResult>;
  started_at: string;
  finished_at: string;
}
