/** What an inbox item is about (spec/asks.md, "Inbox"). */
export const INBOX_KINDS = ['ask', 'answer', 'mention', 'review', 'assigned', 'approval', 'overdue', 'budget', 'reply', 'changed', 'to_review'] as const;
/** Where an inbox item stands for its principal. */
export const INBOX_STATES = ['unread', 'read', 'done'] as const;
