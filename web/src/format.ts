import type { Status } from './types.ts';

export const STATUS_LABEL: Record<Status, string> = {
  todo: 'To do',
  in_progress: 'In progress',
  in_review: 'In review',
  blocked: 'Blocked',
  done: 'Done',
  cancelled: 'Cancelled',
};

/** "1h 02m"-style: "4m 05s", "12s"; the sign is ignored. */
export function duration(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  return s >= 3600 ? `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m` : s >= 60 ? `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/** "4m 05s left", "expired 12s ago": a lease's time left, from the server's expires_at. */
export function timeLeft(expiresAt: string, now: number): string {
  const ms = Date.parse(expiresAt) - now;
  return ms >= 0 ? `${duration(ms)} left` : `expired ${duration(ms)} ago`;
}

/** "due in 9m 05s", or "past due by 12s" once it has passed: a deadline as the time left. */
export function dueIn(dueAt: string, now: number): string {
  const ms = Date.parse(dueAt) - now;
  return ms >= 0 ? `due in ${duration(ms)}` : `past due by ${duration(ms)}`;
}

/** "3 min ago" style relative time for timelines; the exact time is in the title attribute. */
export function ago(iso: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 10) return 'just now';
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(iso).toLocaleDateString();
}

/** "in 12 min", "in 5 h", "in 3 days": a time ahead, coarsely; the exact time belongs beside it. */
export function ahead(iso: string, now: number): string {
  const s = Math.max(0, Math.round((Date.parse(iso) - now) / 1000));
  if (s < 60) return 'in under a minute';
  if (s < 3600) return `in ${Math.floor(s / 60)} min`;
  if (s < 172_800) return `in ${Math.floor(s / 3600)} h`;
  return `in ${Math.floor(s / 86_400)} days`;
}

export function exact(iso: string): string {
  return new Date(iso).toLocaleString();
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** A comment's first words for one line: whitespace folded, cut at a word near 140 characters. */
export function firstWords(body: string): string {
  const text = body.replace(/\s+/g, ' ').trim();
  return text.length <= 140 ? text : `${text.slice(0, 140).replace(/\s\S*$/, '')}…`;
}
