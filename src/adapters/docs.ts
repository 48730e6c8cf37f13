import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { ERROR_CODES, ERRORS, BatonError, type ErrorCode, OPERATION_NAMES, renderHint } from '../errors.ts';
import { TASK_STATUSES, TRANSITIONS, transitionGuard, transitionVia } from '../domain/task-status.ts';
import type { Service } from '../service/service.ts';
import { authorizationTable } from './authorization-docs.ts';
import { limitsTable } from './limits-table.ts';
import { sendProblem } from './rest/problem.ts';
import { API_PREFIX } from './rest/routes.ts';

const SPEC_DIR = fileURLToPath(new URL('../../spec/', import.meta.url));
const MARKDOWN = 'text/markdown; charset=utf-8';

/**
 * The spec pages by file name (`api.md` …), read once. Tables that code owns (state machine,
 * operations, errors) are generated into the pages at `<!-- generated:NAME -->` markers, so the
 * docs cannot drift from behaviour; the limits table reads the OpenAPI document the app serves. REST
 * serves them at /spec/*.md and MCP as resources.
 */
export async function loadSpecPages(service: Service, openapi: Parameters<typeof limitsTable>[0]): Promise<ReadonlyMap<string, string>> {
  const generated: Record<string, string> = {
    'state-machine': stateMachineTable(),
    operations: operationsTable(service),
    errors: errorsTable(),
    authorization: authorizationTable(service.operations),
    limits: limitsTable(openapi, new Set(service.operations.map((op) => op.name))),
  };
  const pages = new Map<string, string>();
  for (const file of (await readdir(SPEC_DIR)).filter((f) => f.endsWith('.md'))) {
    const text = await readFile(SPEC_DIR + file, 'utf8');
    pages.set(file, text.replace(/<!-- generated:([\w-]+) -->/g, (marker, name: string) => generated[name] ?? marker));
  }
  return pages;
}

/** Serves the spec pages as Markdown at /spec/*.md and one page per error code at /errors/{code}. */
export function registerDocs(app: FastifyInstance, service: Service, pages: ReadonlyMap<string, string>): void {
  app.get('/spec', async (_request, reply) => reply.redirect('/spec/index.md'));
  app.get<{ Params: { page: string } }>('/spec/:page', async (request, reply) => {
    const page = pages.get(request.params.page);
    if (!page) {
      return sendProblem(reply, new BatonError('route_not_found', `No spec page ${request.params.page}; see /spec/index.md.`), service, request.id);
    }
    return reply.type(MARKDOWN).send(page);
  });
  app.get<{ Params: { code: string } }>('/errors/:code', async (request, reply) => {
    const code = request.params.code as ErrorCode;
    if (!ERROR_CODES.includes(code)) {
      return sendProblem(reply, new BatonError('route_not_found', `No error code ${code}; see /spec/errors.md.`), service, request.id);
    }
    return reply.type(MARKDOWN).send(errorPage(code));
  });
}

function stateMachineTable(): string {
  const rows = TASK_STATUSES.flatMap((from) =>
    TRANSITIONS[from].map((to) => {
      const guard = transitionGuard(from, to);
      const who =
        guard === 'human'
          ? 'a human'
          : guard === 'human_or_reviewer'
            ? 'a human, or scope `tasks:review`'
            : from === 'in_progress'
              ? 'the lease holder, or a human'
              : 'any caller with the scope';
      return `| \`${from}\` | \`${to}\` | \`${transitionVia(from, to)}\` | ${who} |`;
    }),
  );
  return ['| from | to | operation | who |', '|---|---|---|---|', ...rows].join('\n');
}

function operationsTable(service: Service): string {
  const rows = service.operations.map(
    (op) => `| \`${op.name}\` | \`${op.http.method} ${API_PREFIX}${op.http.path}\` | ${op.scope ? `\`${op.scope}\`` : 'any token'} | ${op.summary} |`,
  );
  return ['| operation | route | scope | what it does |', '|---|---|---|---|', ...rows].join('\n');
}

function errorsTable(): string {
  const rows = ERROR_CODES.map((code) => {
    const e = ERRORS[code];
    return `| [\`${code}\`](/errors/${code}) | ${e.status} | ${e.retryable} | ${e.title} | ${renderHint(e.hint, OPERATION_NAMES)} |`;
  });
  return ['| code | status | retryable | title | what to do |', '|---|---|---|---|---|', ...rows].join('\n');
}

function errorPage(code: ErrorCode): string {
  const e = ERRORS[code];
  return [
    `# \`${code}\``,
    '',
    `**${e.title}** — HTTP ${e.status}, retryable: ${e.retryable}.`,
    '',
    `What to do: ${renderHint(e.hint, OPERATION_NAMES)}`,
    '',
    `Background: [${e.docs}](${e.docs}). All codes: [/spec/errors.md](/spec/errors.md).`,
    '',
  ].join('\n');
}
