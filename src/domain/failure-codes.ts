/**
 * Why a run failed (spec/runs.md, "Failure codes"): a closed list Baton documents and counts, plus
 * the agent's own codes under the `x-` prefix. These three Baton sets: `unspecified` (a failed
 * release that named no code), `lapsed` and `cancelled`.
 */
export const FAILURE_CODES = ['unspecified', 'lapsed', 'cancelled'] as const;

/** The codes an agent names when it fails an attempt (the others Baton sets). */
export const REPORTED_FAILURE_CODES = [
  'timeout',
  'tool_error',
  'test_failure',
  'build_failure',
  'needs_human',
  'budget_exhausted',
  'rate_limited',
  'model_error',
  'environment',
  'conflict',
  'invalid_task',
  'crashed',
] as const;
export type FailureCode = (typeof FAILURE_CODES)[number] | (typeof REPORTED_FAILURE_CODES)[number];

/**
 * What an agent may name: a reported code, or its own, `x-` then a lower-case word of letters,
 * digits, `_`, `.` or `-` (at most 64 characters in all). One pattern rather than an enum beside a
 * pattern: it lists the codes in a third fewer bytes of every agent's tool list.
 */
export const AGENT_FAILURE_CODE = new RegExp(`^(?:${REPORTED_FAILURE_CODES.join('|')}|x-[a-z0-9][a-z0-9_.-]{0,61})$`);

/** The code of a failure recorded before codes existed (or by a previous release): a lapse, or a failed release without one. */
export function legacyFailureCode(kind: 'expired' | 'failed'): FailureCode {
  return kind === 'expired' ? 'lapsed' : 'unspecified';
}
