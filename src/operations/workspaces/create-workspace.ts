import { z } from 'zod';
import { ROLE_SCOPES } from '../../domain/roles.ts';
import { SYSTEM_ACTOR } from '../../domain/scopes.ts';
import { BatonError } from '../../errors.ts';
import { insertAgent, lockAgent } from '../../store/agents.ts';
import { findIdentityOf, insertIdentity } from '../../store/sessions.ts';
import { insertToken } from '../../store/tokens.ts';
import { bindWorkspace } from '../../store/workspace-scope.ts';
import { insertWorkspace } from '../../store/workspaces.ts';
import { generateToken, hashToken, tokenPrefix } from '../../tokens.ts';
import { defineOperation } from '../define-operation.ts';
import { toWorkspace, workspaceName, workspaceOutput } from './workspace-schema.ts';

export const createWorkspace = defineOperation({
  name: 'workspaces_create',
  summary: 'Create a workspace you own (owners only); invite people with agents_create and an email.',
  kind: 'write',
  scope: 'agents:admin',
  humanOnly: true,
  approval: 'none',
  toolset: 'admin',
  http: { method: 'POST', path: '/workspaces', successStatus: 201 },
  input: z.strictObject({ name: workspaceName }),
  output: z.object({
    workspace: workspaceOutput,
    owner_id: z.string().describe('You, as its owner.'),
    token: z.string().nullable().describe('For a caller without single sign-on, a token of its owner, shown once (a replay answers null).'),
  }),
  redactForReplay: (output) => ({ ...output, token: null }),
  async run(tx, ctx, input) {
    const me = await lockAgent(tx, ctx.actor.id);
    if (me?.role !== 'owner') throw new BatonError('owner_required', 'Only an owner of a workspace may create another.');
    const identity = await findIdentityOf(tx, me.id);
    const id = ctx.ids.make('wsp');
    // What follows is the new workspace's, written bound to it; then back to the caller's for the events and the stored answer.
    // Made by the system, as the first workspace's owner is: the caller is a principal of this workspace, and nothing
    // of it may show in the new one (who asked is in this workspace's workspace.created event).
    const by = { created_at: ctx.now, created_by_id: SYSTEM_ACTOR.id, created_by_kind: SYSTEM_ACTOR.kind };
    await bindWorkspace(tx, id);
    const row = await insertWorkspace(tx, { id, name: input.name, created_at: ctx.now, created_by_id: SYSTEM_ACTOR.id });
    if (!row) throw new BatonError('conflict_state', `A workspace named "${input.name}" exists on this server.`, { hint: 'Workspace names are unique on the server: choose another.' });
    const owner = await insertAgent(tx, { id: ctx.ids.make('agt'), name: me.name, kind: 'human', scopes: [...ROLE_SCOPES.owner], role: 'owner', email: me.email, tool_allowlist: null, ...by });
    let token: string | null = null;
    if (identity) {
      await insertIdentity(tx, { issuer: identity.issuer, subject: identity.subject, workspace_id: id, agent_id: owner.id, email: identity.email, created_at: ctx.now, last_sign_in_at: new Date(0) });
    } else {
      token = generateToken();
      await insertToken(tx, {
        id: ctx.ids.make('tok'), agent_id: owner.id, machine: 'workspace-owner', token_hash: hashToken(token), token_prefix: tokenPrefix(token),
        scopes: [...ROLE_SCOPES.owner], expires_at: null, ...by,
      });
    }
    await bindWorkspace(tx, ctx.actor.workspaceId, ctx.actor.id);
    ctx.emit({ type: 'workspace.created', subject: id, data: { name: row.name, owner_id: owner.id } });
    return { workspace: toWorkspace(row, ctx.actor.workspaceId), owner_id: owner.id, token };
  },
});
