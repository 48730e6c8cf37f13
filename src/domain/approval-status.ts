/** What became of an approval request: `pending` until a human decides. */
export const APPROVAL_STATUSES = ['pending', 'approved', 'denied', 'failed', 'expired'] as const;
