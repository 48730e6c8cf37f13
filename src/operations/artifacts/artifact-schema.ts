import { z } from 'zod';
import { idPattern } from '../../ids.ts';

export const artifactId = z.string().regex(new RegExp(idPattern('art')), 'must be an artifact id: art_ followed by a 26-character ULID');

/** How a long body travels inside a response: a reference, never the bytes. */
export const artifactRef = z.object({
  id: z.string(),
  // Its file name, where it was given one (no description: the member's name says it, in every answer's schema).
  name: z.string().optional(),
  size: z.int().describe('Bytes.'),
  content_type: z.string(),
  sha256: z.string().describe('Lowercase hex SHA-256 of the bytes; also the ETag of the content.'),
  href: z.string().describe('GET it for the raw bytes, served with `content_type`.'),
});
export type ArtifactRef = z.infer<typeof artifactRef>;

/** The reference for an artifact's stored facts: its file name only where it has one (most answers carry refs, and stay lean). */
export function toArtifactRef(row: { id: string; size: number; content_type: string; sha256: string; name?: string | null }): ArtifactRef {
  return { id: row.id, ...(row.name ? { name: row.name } : {}), size: row.size, content_type: row.content_type, sha256: row.sha256, href: `/api/v1/artifacts/${row.id}/content` };
}
