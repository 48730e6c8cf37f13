import { createAgent } from './agents/create-agent.ts';
import { createToken } from './agents/create-token.ts';
import { getAgent } from './agents/get-agent.ts';
import { listAgents } from './agents/list-agents.ts';
import { listDirectory } from './directory/list-directory.ts';
import { listTokens } from './agents/list-tokens.ts';
import { revokeToken } from './agents/revoke-token.ts';
import { rotateToken } from './agents/rotate-token.ts';
import { setRole } from './agents/set-role.ts';
import { listSessions } from './sessions/list-sessions.ts';
import { revokeSession } from './sessions/revoke-session.ts';
import { createWorkspace } from './workspaces/create-workspace.ts';
import { getWorkspace } from './workspaces/get-workspace.ts';
import { listWorkspaces } from './workspaces/list-workspaces.ts';
import { updateWorkspace } from './workspaces/update-workspace.ts';
import { updateAgent } from './agents/update-agent.ts';
import { createComment } from './comments/create-comment.ts';
import { deleteComment } from './comments/delete-comment.ts';
import { getComment } from './comments/get-comment.ts';
import { listComments } from './comments/list-comments.ts';
import { updateComment } from './comments/update-comment.ts';
import { createArtifact } from './artifacts/create-artifact.ts';
import { getArtifact } from './artifacts/get-artifact.ts';
import { approveApproval } from './approvals/approve-approval.ts';
import { denyApproval } from './approvals/deny-approval.ts';
import { getApproval } from './approvals/get-approval.ts';
import { listApprovals } from './approvals/list-approvals.ts';
import type { Operation } from './define-operation.ts';
import { answerAsk } from './asks/answer-ask.ts';
import { cancelAsk } from './asks/cancel-ask.ts';
import { createAsk } from './asks/create-ask.ts';
import { getAsk } from './asks/get-ask.ts';
import { listAsks } from './asks/list-asks.ts';
import { listInbox } from './inbox/list-inbox.ts';
import { markInbox } from './inbox/mark-inbox.ts';
import { wait } from './inbox/wait.ts';
import { getPreferences } from './notifications/get-preferences.ts';
import { listNotifications } from './notifications/list-notifications.ts';
import { redeemLink } from './notifications/redeem-link.ts';
import { updatePreferences } from './notifications/update-preferences.ts';
import { listEvents } from './events/list-events.ts';
import { streamEvents } from './events/stream-events.ts';
import { getLease } from './leases/get-lease.ts';
import { heartbeatLease } from './leases/heartbeat-lease.ts';
import { listLeases } from './leases/list-leases.ts';
import { releaseLease } from './leases/release-lease.ts';
import { releaseLeases } from './leases/release-leases.ts';
import { cycleLease } from './leases/cycle-lease.ts';
import { cycleLeases } from './leases/cycle-leases.ts';
import { whoami } from './meta/whoami.ts';
import { assignTask } from './tasks/assign-task.ts';
import { handInTask } from './tasks/hand-in-task.ts';
import { requeueTask } from './tasks/requeue-task.ts';
import { reviewTask } from './tasks/review-task.ts';
import { claimNextTask } from './tasks/claim-next-task.ts';
import { claimTask } from './tasks/claim-task.ts';
import { createTask } from './tasks/create-task.ts';
import { deleteTask } from './tasks/delete-task.ts';
import { getTask } from './tasks/get-task.ts';
import { listTaskEvents } from './tasks/list-task-events.ts';
import { listTasks } from './tasks/list-tasks.ts';
import { updateTask } from './tasks/update-task.ts';
import { acquireReservation } from './reservations/acquire-reservation.ts';
import { getReservation } from './reservations/get-reservation.ts';
import { heartbeatReservation } from './reservations/heartbeat-reservation.ts';
import { listReservations } from './reservations/list-reservations.ts';
import { releaseReservation } from './reservations/release-reservation.ts';
import { appendLog } from './runs/append-log.ts';
import { getRun } from './runs/get-run.ts';
import { listRuns } from './runs/list-runs.ts';
import { reportUsage } from './runs/report-usage.ts';
import { createBudget } from './budgets/create-budget.ts';
import { deleteBudget } from './budgets/delete-budget.ts';
import { getBudget } from './budgets/get-budget.ts';
import { listBudgets } from './budgets/list-budgets.ts';
import { updateBudget } from './budgets/update-budget.ts';
import { createSchedule } from './schedules/create-schedule.ts';
import { getInsight } from './insight/get-insight.ts';
import { getExport } from './exports/get-export.ts';
import { deleteSchedule } from './schedules/delete-schedule.ts';
import { getSchedule } from './schedules/get-schedule.ts';
import { listSchedules } from './schedules/list-schedules.ts';
import { updateSchedule } from './schedules/update-schedule.ts';
import { createTemplate } from './templates/create-template.ts';
import { deleteTemplate } from './templates/delete-template.ts';
import { getTemplate } from './templates/get-template.ts';
import { instantiateTemplate } from './templates/instantiate-template.ts';
import { listTemplates } from './templates/list-templates.ts';
import { updateTemplate } from './templates/update-template.ts';
import { createWebhook } from './webhooks/create-webhook.ts';
import { deleteWebhook } from './webhooks/delete-webhook.ts';
import { getWebhook } from './webhooks/get-webhook.ts';
import { listDeliveries } from './webhooks/list-deliveries.ts';
import { listWebhooks } from './webhooks/list-webhooks.ts';
import { rotateWebhookSecret } from './webhooks/rotate-webhook-secret.ts';
import { replayWebhook } from './webhooks/replay-webhook.ts';
import { updateWebhook } from './webhooks/update-webhook.ts';

const registry = [
  whoami,
  createTask,
  listTasks,
  getTask,
  updateTask,
  deleteTask,
  claimNextTask,
  claimTask,
  listTaskEvents,
  assignTask,
  handInTask,
  reviewTask,
  requeueTask,
  listComments,
  createComment,
  getComment,
  updateComment,
  deleteComment,
  createAsk,
  listAsks,
  getAsk,
  answerAsk,
  cancelAsk,
  listInbox,
  markInbox,
  getPreferences,
  updatePreferences,
  redeemLink,
  listNotifications,
  wait,
  listLeases,
  getLease,
  heartbeatLease,
  releaseLease,
  releaseLeases,
  cycleLease,
  cycleLeases,
  reportUsage,
  appendLog,
  listRuns,
  getRun,
  listBudgets,
  createBudget,
  getBudget,
  updateBudget,
  deleteBudget,
  getInsight,
  getExport,
  listEvents,
  streamEvents,
  listApprovals,
  getApproval,
  approveApproval,
  denyApproval,
  listAgents,
  listDirectory,
  createAgent,
  getAgent,
  updateAgent,
  createToken,
  listTokens,
  revokeToken,
  rotateToken,
  setRole,
  listSessions,
  revokeSession,
  listWorkspaces,
  createWorkspace,
  getWorkspace,
  updateWorkspace,
  createArtifact,
  getArtifact,
  listReservations,
  acquireReservation,
  getReservation,
  heartbeatReservation,
  releaseReservation,
  listSchedules,
  createSchedule,
  getSchedule,
  updateSchedule,
  deleteSchedule,
  listTemplates,
  createTemplate,
  getTemplate,
  updateTemplate,
  deleteTemplate,
  instantiateTemplate,
  listWebhooks,
  createWebhook,
  getWebhook,
  updateWebhook,
  deleteWebhook,
  listDeliveries,
  replayWebhook,
  rotateWebhookSecret,
];

/** THE registry: every capability Baton has, each defined once. Adapters derive everything from it. */
export const operations: readonly Operation[] = registry;

/** Every operation's name, as a union: a table keyed by it (authorization-table.ts) must have a row for each. */
export type OperationName = (typeof registry)[number]['name'];
/** Every operation with its own schema types (the client's generated types are checked against them). */
export type RegisteredOperation = (typeof registry)[number];
