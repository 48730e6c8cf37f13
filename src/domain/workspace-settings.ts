/** The settings a workspace may set for itself (migration 0290); null: the server's default. */
export interface WorkspaceSettings {
  readonly escalate_ask_s: number | null;
  readonly escalate_approval_s: number | null;
  readonly escalate_review_s: number | null;
  readonly escalate_to: readonly string[] | null;
  readonly rate_limit: number | null;
}

/** Escalation SLAs in seconds (0: never) and who is notified; the server's are BATON_ESCALATE_*. */
export interface Escalation {
  readonly askS: number;
  readonly approvalS: number;
  readonly reviewS: number;
  readonly to: readonly string[];
}

/** A workspace's escalation SLAs and targets: its own where set, the server's (BATON_ESCALATE_*) elsewhere. */
export function effectiveEscalation(settings: WorkspaceSettings, server: Escalation): Escalation {
  return {
    askS: settings.escalate_ask_s ?? server.askS,
    approvalS: settings.escalate_approval_s ?? server.approvalS,
    reviewS: settings.escalate_review_s ?? server.reviewS,
    to: settings.escalate_to ?? server.to,
  };
}
