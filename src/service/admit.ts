import { allowlistAdmits } from '../operations/authorization.ts';
import type { z } from 'zod';
import type { Config } from '../config.ts';
import { BatonError } from '../errors.ts';
import { type Operation, type ParameterLocation, parameterLocation } from '../operations/define-operation.ts';
import { outOfBounds } from '../operations/configured-bounds.ts';
import { textIssues } from '../operations/shared/text.ts';
import type { Principal } from '../domain/principal.ts';

/*
 * The checks every call passes before it runs, on every interface: who may call the operation
 * (`authorize`), and what input it accepts (`validate`), each refusal a problem naming why.
 */

/** Scope, then toolAllowlist, then a human-only operation's caller: throws `forbidden_scope`, `tool_not_allowed` or `human_required`. */
export function authorize(operation: Operation, principal: Principal): void {
  if (operation.scope !== null && !principal.scopes.has(operation.scope)) {
    throw new BatonError('forbidden_scope', `${operation.name} needs scope ${operation.scope}; this token has ${[...principal.scopes].join(', ') || 'none'}.`, {
      extra: { required_scope: operation.scope },
    });
  }
  // Operations open to every token (whoami) are outside the allowlist: an agent can always learn what it may do.
  if (operation.scope !== null && !allowlistAdmits(principal.toolAllowlist, operation.name)) {
    throw new BatonError('tool_not_allowed', `${operation.name} is not in the toolAllowlist of agent ${principal.id}.`, {
      extra: { operation: operation.name },
    });
  }
  if (operation.humanOnly === true && principal.kind !== 'human') {
    throw new BatonError('human_required', `${operation.name} is for humans only; agents never call it, whatever their scopes.`);
  }
}

/** Parses the input with the operation's schema; throws `invalid_parameter` or `validation_failed` naming each field. */
export function validate(operation: Operation, rawInput: unknown, config: Config): z.output<typeof operation.input> {
  const unsafe = textIssues(rawInput);
  if (unsafe.length > 0) throw invalidInput(operation, unsafe.map((issue) => fieldError(operation, issue.path, issue.detail)));
  const parsed = operation.input.safeParse(rawInput ?? {}, { error: missingField });
  // Bounds that are this server's config (a lease's ttl_s) are not in the static schema.
  const configured = outOfBounds(operation.input, rawInput, config).map(({ key, detail }) => fieldError(operation, [key], detail));
  if (parsed.success && configured.length === 0) return parsed.data;
  const issues = parsed.error?.issues ?? [];
  const errors = issues.flatMap((issue) => {
    const keys = issue.code === 'unrecognized_keys' ? issue.keys.map((k) => [...issue.path, k]) : [issue.path];
    return keys.map((path) => fieldError(operation, path, issue.code === 'unrecognized_keys' ? 'unknown field' : issue.message));
  });
  // Where the accepted fields are listed depends on the interface: the hint's [[schema]] says it in the caller's.
  const unknown = issues.some((issue) => issue.code === 'unrecognized_keys');
  throw invalidInput(operation, [...errors, ...configured], unknown ? UNKNOWN_FIELD_HINT : undefined);
}

const UNKNOWN_FIELD_HINT = 'Drop the fields `errors` calls unknown and fix any other it lists, then send again; [[schema]] lists the accepted ones.';

/** A member left out is `required`, not Zod's "expected string, received undefined"; any other issue keeps Zod's words. */
const missingField: z.core.$ZodErrorMap = (issue) => (issue.code === 'invalid_type' && issue.input === undefined ? 'required' : undefined);

interface FieldError {
  readonly pointer: string;
  readonly detail: string;
  readonly location: ParameterLocation;
}

function fieldError(operation: Operation, path: readonly PropertyKey[], detail: string): FieldError {
  return {
    pointer: path.map((p) => `/${String(p).replaceAll('~', '~0').replaceAll('/', '~1')}`).join(''),
    detail,
    location: parameterLocation(operation, String(path[0] ?? '')),
  };
}

/** `invalid_parameter` when every error is in the path or query, else `validation_failed`. */
function invalidInput(operation: Operation, errors: readonly FieldError[], hint?: string): BatonError {
  const onlyParameters = errors.every((e) => e.location !== 'body');
  const code = onlyParameters ? 'invalid_parameter' : 'validation_failed';
  const summary = errors.map((e) => `${e.pointer}: ${e.detail}`).join('; ');
  return new BatonError(code, `${operation.name} input is invalid: ${summary}`, { extra: { errors }, ...(hint ? { hint } : {}) });
}
