import type { Kysely } from 'kysely';
import { BatonError } from '../../errors.ts';
import { isId } from '../../ids.ts';
import { findPrincipals } from '../../store/agents.ts';
import type { DB } from '../../store/schema.ts';

/** A principal a field names. */
export interface PrincipalRef {
  id: string;
  kind: 'human' | 'agent';
  name: string;
}

/**
 * `@name` or `@agt_…`, not inside a word or an e-mail address; a trailing `.` `-` ends the
 * sentence, not the name. Letters are any script's (names from single sign-on: `@José_García`).
 */
const MENTION = /(?<![\p{L}\p{N}_@.])@([\p{L}\p{N}](?:[\p{L}\p{N}._-]*[\p{L}\p{N}_])?)/gu;
/** Code is quoted, not addressed: mentions inside code spans and fences do not count. */
const CODE = /```[\s\S]*?```|`[^`\n]*`/g;

/** The distinct mentions in a Markdown body, in order of first appearance. */
export function mentionsIn(body: string): string[] {
  const names = [...body.replace(CODE, ' ').matchAll(MENTION)].map((m) => m[1] ?? '');
  return [...new Set(names)];
}

const SPACES_HINT = 'Mention a name as it is written, with each space as `_` (`@Ada_Lovelace` for "Ada Lovelace"), or by id (`@agt_…`).';

/**
 * How `@name` spells a principal's name: each space `_`, if a mention can spell it at all (a name
 * ending in `.` or holding `,` cannot; such a principal is mentioned by id). Whether it names only
 * that principal is the caller's question.
 */
export function mentionSpelling(name: string): string | undefined {
  const spelled = name.replaceAll(' ', '_');
  const [found, ...more] = mentionsIn(`@${spelled}`);
  return found === spelled && more.length === 0 ? spelled : undefined;
}

/** Whether `mention` names the principal called `name`: case-insensitive, a space written `_`. */
export function namesMatch(name: string, mention: string): boolean {
  const spelled = (text: string) => text.toLowerCase().replaceAll(' ', '_');
  return spelled(name) === spelled(mention);
}

function unknown(pointer: string, detail: string, problemDetail: string, hint?: string): BatonError {
  return new BatonError('unknown_principal', problemDetail, {
    ...(hint ? { hint } : {}),
    extra: { errors: [{ pointer, detail, location: 'body' }] },
  });
}

/**
 * Resolves each mention (an id, or a name matched case-insensitively) to one principal. An unknown
 * name, or one that more than one principal has, is `unknown_principal` naming it.
 */
export async function resolveMentions(db: Kysely<DB>, mentions: readonly string[], pointer = '/body'): Promise<PrincipalRef[]> {
  if (mentions.length === 0) return [];
  const ids = mentions.filter((m) => isId('agt', m));
  const names = mentions.filter((m) => !isId('agt', m));
  const found = await findPrincipals(db, { ids, names });
  const resolved = new Map<string, PrincipalRef>();
  for (const mention of mentions) {
    const matches = isId('agt', mention) ? found.filter((p) => p.id === mention) : found.filter((p) => namesMatch(p.name, mention));
    if (matches.length === 0) throw unknown(pointer, `@${mention} names no principal`, `The text mentions @${mention}, which names no agent or human.`, SPACES_HINT);
    const [only] = matches;
    if (matches.length > 1 || !only) {
      throw unknown(pointer, `@${mention} names ${matches.length} principals`, `The text mentions @${mention}, which ${matches.length} principals are called.`, `Mention one of them by id instead: ${matches.map((p) => `@${p.id}`).join(', ')}.`);
    }
    resolved.set(only.id, { id: only.id, kind: only.kind, name: only.name });
  }
  return [...resolved.values()];
}

/** The principal an `assignee` field names, which must exist and be enabled. */
export async function resolveAssignee(db: Kysely<DB>, id: string, pointer = '/assignee'): Promise<PrincipalRef> {
  const [found] = await findPrincipals(db, { ids: [id], names: [] });
  if (!found) throw unknown(pointer, 'no such principal', `assignee ${id} names no agent or human.`);
  if (found.disabled) {
    throw new BatonError('principal_disabled', `assignee ${found.id} (${found.name}) is disabled.`, {
      extra: { errors: [{ pointer, detail: 'this principal is disabled', location: 'body' }] },
    });
  }
  return { id: found.id, kind: found.kind, name: found.name };
}
