import {
  AUTHORIZATION_TABLE,
  type AccessCase,
  type Cell,
  type ByOwnership,
  cellOf,
  ownership,
  TABLE_PRINCIPALS,
} from '../operations/authorization-table.ts';
import type { Operation } from '../operations/define-operation.ts';

/** A cell in words: `allowed`, `approval`, `403 human_required`, alternatives joined by "or"; `n/a` where no such object can be the caller's. */
export function describeCell(cell: Cell): string {
  if (cell === null) return 'n/a';
  if ('kind' in cell) {
    if (cell.kind !== 'refused') return cell.kind;
    return cell.code === undefined ? String(cell.status) : `${cell.status} ${cell.code}`;
  }
  return cell.map((c) => describeCell(c)).join(' or ');
}

function describeCells(cells: Cell | ByOwnership, object: AccessCase['object']): string {
  const { own, others } = ownership(cells);
  const [a, b] = [describeCell(own), describeCell(others)];
  if (object === null || a === b) return a;
  return `${a} on its own, ${b} on others'`;
}

/**
 * The authorization table as Markdown (spec/api.md, "Authorization model"): one line per operation
 * and request, a column per principal, then the notes that name the rules behind the cells.
 */
export function authorizationTable(operations: readonly Operation[]): string {
  const lines = ['| operation | request (object) | human admin | human member | human viewer | agent | agent admin |', '|---|---|---|---|---|---|---|'];
  const notes: string[] = [];
  for (const operation of operations) {
    const row = AUTHORIZATION_TABLE[operation.name as keyof typeof AUTHORIZATION_TABLE];
    for (const access of [row, ...(row.also ?? [])]) {
      const cells = TABLE_PRINCIPALS.map((who) => describeCells(cellOf(access, who, operation.scope), access.object));
      lines.push(`| \`${operation.name}\` | ${access.request}${access.object ? ` (${access.object.replace('_', ' ')})` : ''} | ${cells.join(' | ')} |`);
      if (access.note) notes.push(`- \`${operation.name}\`, ${access.request}: ${access.note}`);
    }
  }
  return [...lines, '', ...notes].join('\n');
}
