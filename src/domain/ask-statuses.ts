/** Where an ask stands: open until answered, defaulted at its last deadline, or cancelled by its asker. */
export const ASK_STATUSES = ['open', 'answered', 'defaulted', 'cancelled'] as const;
export type AskStatus = (typeof ASK_STATUSES)[number];
