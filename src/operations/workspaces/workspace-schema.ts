import { z } from 'zod';
import { idPattern } from '../../ids.ts';
import type { WorkspaceRow } from '../../store/workspaces.ts';

export const workspaceId = z.string().regex(new RegExp(idPattern('wsp'))).describe('A workspace id (`wsp_…`).');

export const workspaceName = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[^\p{Cc}]+$/u, 'no control characters')
  .describe('Unique on the server.');

export const workspaceOutput = z.object({
  id: z.string(),
  name: z.string(),
  current: z.boolean().describe('The workspace this token or session acts in.'),
  created_at: z.string(),
});

export function toWorkspace(row: WorkspaceRow, currentId: string): z.output<typeof workspaceOutput> {
  return { id: row.id, name: row.name, current: row.id === currentId, created_at: row.created_at.toISOString() };
}
