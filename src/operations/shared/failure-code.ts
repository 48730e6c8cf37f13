import { z } from 'zod';
import { AGENT_FAILURE_CODE } from '../../domain/failure-codes.ts';

/** A failure code as a release names it: one of the documented list, or the agent's own under `x-` (spec/runs.md). */
export const failureCodeInput = z.string().regex(AGENT_FAILURE_CODE, 'must be a documented code (spec/runs.md) or x- followed by your own (a-z, 0-9, _ . -)');

/** A failure code as served: any of domain/failure-codes.ts, or an agent's own. */
export const failureCode = z.string();
