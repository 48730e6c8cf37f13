/**
 * Hints in the CLI's words. The CLI speaks REST (through the typed client), so a problem's hint
 * names REST routes and headers; where the CLI has a command for a route, the hint names the
 * command instead (`GET /api/v1/tasks` → `baton tasks list`), and the Idempotency-Key header is
 * the `--idempotency-key` option. Routes without a command, or with a query the command does not
 * take, stay as they are.
 */
const COMMANDS: readonly (readonly [method: string, path: string, command: string])[] = [
  ['GET', '/tasks', 'baton tasks list'],
  ['GET', '/tasks/{id}', 'baton tasks show {id}'],
  ['POST', '/tasks/claim', 'baton tasks claim'],
  ['POST', '/tasks/{id}/claim', 'baton tasks claim {id}'],
  ['GET', '/tasks/{id}/comments', 'baton tasks comments {id}'],
  ['GET', '/tasks/{id}/events', 'baton tasks events {id}'],
  ['POST', '/leases/{id}/heartbeat', 'baton tasks heartbeat {id}'],
  ['POST', '/leases/{id}/release', 'baton tasks release {id}'],
  ['GET', '/whoami', 'baton whoami'],
  ['GET', '/agents', 'baton agents list'],
  ['GET', '/approvals', 'baton approvals list'],
  ['DELETE', '/tokens/{id}', 'baton tokens revoke {id}'],
];

/** A route as the REST hint writes it: the id a concrete one or still `{id}`; not followed by a query or a longer path. */
function routePattern(method: string, path: string): RegExp {
  return new RegExp(`${method} /api/v1${path.replace('{id}', '(\\{id\\}|[A-Za-z0-9_]+)')}(?![\\w/?{])`, 'g');
}

/** The hint with REST routes the CLI has commands for named as those commands. */
export function cliHint(hint: string): string {
  let text = hint.replace(/\bthe same Idempotency-Key\b/g, 'the same `--idempotency-key`');
  for (const [method, path, command] of COMMANDS) {
    text = text.replace(routePattern(method, path), (_route, id?: string) => `\`${command.replace('{id}', id === undefined || id === '{id}' ? '<id>' : id)}\``);
  }
  return text;
}
