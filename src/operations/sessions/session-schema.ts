import { z } from 'zod';
import { describeDevice } from '../../domain/device.ts';
import type { Principal } from '../../domain/principal.ts';
import { BatonError } from '../../errors.ts';
import { idPattern } from '../../ids.ts';
import type { SessionRow } from '../../store/sessions.ts';

export const sessionId = z.string().regex(new RegExp(idPattern('ses')), 'must be a session id: ses_ followed by a 26-character ULID');

export const sessionOutput = z.object({
  id: z.string(),
  agent_id: z.string(),
  device: z.string().describe('Browser and system, from the User-Agent.'),
  user_agent: z.string(),
  created_at: z.iso.datetime(),
  last_seen_at: z.iso.datetime(),
  expires_at: z.iso.datetime(),
  ended_at: z.iso.datetime().nullable(),
  current: z.boolean().describe('The session of this request.'),
});

export function toSession(row: SessionRow, actor: Principal) {
  return {
    id: row.id,
    agent_id: row.agent_id,
    device: describeDevice(row.user_agent),
    user_agent: row.user_agent,
    created_at: row.created_at.toISOString(),
    last_seen_at: row.last_seen_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    ended_at: row.ended_at?.toISOString() ?? null,
    current: row.id === actor.sessionId,
  };
}

/** A person reaches their own sessions; a human holding agents:admin reaches everyone's. Others' are answered as absent. */
export function mayManageSessionsOf(actor: Principal, agentId: string): boolean {
  return actor.id === agentId || (actor.kind === 'human' && actor.scopes.has('agents:admin'));
}

export function sessionNotFound(id: string): BatonError {
  return new BatonError('not_found', `No session ${id}.`, { hint: '[[sessions_list]] lists your sessions.' });
}
