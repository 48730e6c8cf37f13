import { createHash } from 'node:crypto';

/**
 * SHA-256 of an operation name and its input in canonical JSON (keys sorted at every depth). The
 * JSON is hashed piece by piece, never built whole: an artifact upload's input is megabytes.
 */
export function fingerprint(operation: string, input: unknown): Buffer {
  const hash = createHash('sha256').update(`${operation}\n`);
  writeCanonical(input, (piece) => hash.update(piece));
  return hash.digest();
}

export function canonicalJson(value: unknown): string {
  const pieces: string[] = [];
  writeCanonical(value, (piece) => pieces.push(piece));
  return pieces.join('');
}

/** Writes `value` as canonical JSON to `out`, in order, a piece at a time. */
function writeCanonical(value: unknown, out: (piece: string) => void): void {
  if (value === null || typeof value !== 'object') {
    out(JSON.stringify(value) ?? 'null');
    return;
  }
  if (Array.isArray(value)) {
    out('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out(',');
      writeCanonical(value[i], out);
    }
    out(']');
    return;
  }
  const object = value as Record<string, unknown>;
  out('{');
  let first = true;
  for (const key of Object.keys(object).sort()) {
    const item = object[key];
    if (item === undefined) continue;
    out(`${first ? '' : ','}${JSON.stringify(key)}:`);
    first = false;
    writeCanonical(item, out);
  }
  out('}');
}
