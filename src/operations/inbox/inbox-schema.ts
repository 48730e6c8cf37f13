import { z } from 'zod';
import type { InboxItemRow } from '../../store/inbox.ts';
import { INBOX_KINDS, INBOX_STATES } from '../../domain/inbox-kinds.ts';

export const inboxCounts = z.object({ unread: z.int(), read: z.int(), done: z.int() });

export const inboxItemOutput = z.object({
  id: z.string(),
  kind: z.enum(INBOX_KINDS),
  task_id: z.string(),
  ref_id: z.string().describe('The ask, comment, task or approval it is about.'),
  by: z.string().describe('Who caused it (a principal id).'),
  excerpt: z.string(),
  state: z.enum(INBOX_STATES),
  overdue_at: z.iso.datetime().optional().describe('When it went past its SLA (escalated); absent before.'),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});

export function toInboxItem(row: InboxItemRow): z.infer<typeof inboxItemOutput> {
  return {
    id: row.id,
    kind: row.kind,
    task_id: row.task_id,
    ref_id: row.ref_id,
    by: row.by_id,
    excerpt: row.excerpt,
    state: row.state,
    ...(row.overdue_at ? { overdue_at: row.overdue_at.toISOString() } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
