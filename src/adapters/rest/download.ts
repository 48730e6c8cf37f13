import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CallableOperation } from '../../operations/define-operation.ts';
import type { Call } from '../../service/execute.ts';
import type { Service } from '../../service/service.ts';

export type DownloadFormat = 'jsonl' | 'csv';

const CONTENT_TYPES: Record<DownloadFormat, string> = { jsonl: 'application/x-ndjson; charset=utf-8', csv: 'text/csv; charset=utf-8' };

/** The page a `download` operation answers (define-operation.ts, `HttpBinding.download`). */
interface Page {
  columns: string[];
  data: Record<string, unknown>[];
  next_cursor: string | null;
}

/** The format an Accept header asks for, the first of them it names; undefined for JSON (one page). */
export function downloadFormat(accept: string | undefined): DownloadFormat | undefined {
  for (const part of (accept ?? '').split(',')) {
    const type = part.split(';')[0]?.trim().toLowerCase();
    if (type === 'text/csv') return 'csv';
    if (type === 'application/x-ndjson' || type === 'application/jsonl') return 'jsonl';
    if (type === 'application/json') return undefined;
  }
  return undefined;
}

/**
 * Streams every page of a `download` read as JSON lines or CSV. The first page runs before anything
 * is sent, so a refusal is an ordinary problem+json answer; then each page is written as it is read
 * and the next is read only when the client has taken it (a pull stream), so memory holds one page
 * whatever the window. A failure after the first byte ends the response without its last chunk: the
 * client sees a broken transfer, never a short export that looks whole.
 */
export async function sendDownload(service: Service, operation: CallableOperation, request: FastifyRequest, reply: FastifyReply, call: Call, format: DownloadFormat): Promise<FastifyReply> {
  const params = request.params as Record<string, string>;
  // Pages as large as a page may be, unless the caller chose.
  const input: Record<string, unknown> = { limit: 100, ...(request.query as Record<string, unknown>), ...params };
  const first = JSON.parse((await service.execute(operation, input, call)).body) as Page;
  async function* chunks(): AsyncGenerator<string> {
    let page = first;
    if (format === 'csv') yield csvLine(page.columns);
    for (;;) {
      yield page.data.map((row) => (format === 'csv' ? csvLine(page.columns.map((c) => row[c])) : `${JSON.stringify(row)}\n`)).join('');
      if (page.next_cursor === null) return;
      page = JSON.parse((await service.execute(operation, { ...input, cursor: page.next_cursor }, call)).body) as Page;
    }
  }
  const name = Object.values(params).join('-') || operation.name;
  return reply
    .header('content-disposition', `attachment; filename="${name}.${format}"`)
    .header('cache-control', 'no-store')
    .type(CONTENT_TYPES[format])
    .send(Readable.from(chunks(), { objectMode: false }));
}

/** Cells a spreadsheet would run as a formula (OWASP "CSV injection"): a leading = + - @, tab or carriage return. */
const FORMULA = /^[=+\-@\t\r]/;

/**
 * One CSV record (RFC 4180, CRLF): null is empty, an object its JSON; text that a spreadsheet
 * would read as a formula gets a leading `'`; a cell holding a comma, quote or line break is quoted,
 * its quotes doubled. Numbers stay numbers (a negative one is not text).
 */
export function csvLine(cells: readonly unknown[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  let text = typeof value === 'string' ? value : JSON.stringify(value);
  if (FORMULA.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
