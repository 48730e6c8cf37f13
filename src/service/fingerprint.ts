import { hash } from 'node:crypto';

/** SHA-256 of an operation name and its input in canonical JSON (keys sorted at every depth). */
export function fingerprint(operation: string, input: unknown): Buffer {
  return hash('sha256', `${operation}\n${canonicalJson(input)}`, 'buffer');
}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
