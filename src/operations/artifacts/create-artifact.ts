import { createHash } from 'node:crypto';
import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { databaseArtifactStore, insertArtifact } from '../../store/artifacts.ts';
import { lockTask, updateTask } from '../../store/tasks.ts';
import { defineOperation } from '../define-operation.ts';
import { TASK_ARTIFACTS_MAX, taskId } from '../tasks/task-schema.ts';
import { artifactOutput, toArtifact } from './get-artifact.ts';

// A flat character class: a grouped pattern recurses per group and overflows the stack on megabytes.
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/**
 * A media type that is also a valid header value: spaces, tabs and printable ASCII only (it once
 * took a line break, in a quoted parameter or as `\s`, and the download of such an artifact was a 500).
 */
export const MEDIA_TYPE = /^[\w.+-]+\/[\w.+-]+(?:[ \t]*;[ \t]*[\w.+-]+=(?:"[\t !#-[\]-~]*"|[\w.+-]+))*$/;

/** Base64 decoded this many characters at a time (a multiple of 4), so an upload is never held decoded in full. */
const DECODE_CHUNK = 4 * 1024 * 1024;

/** The decoded size and SHA-256 of the content, without a decoded copy of the whole of it. */
function digest(content: string, encoding: 'utf8' | 'base64'): { size: number; sha256: string } {
  const hash = createHash('sha256');
  if (encoding === 'utf8') return { size: Buffer.byteLength(content, 'utf8'), sha256: hash.update(content, 'utf8').digest('hex') };
  let size = 0;
  for (let at = 0; at < content.length; at += DECODE_CHUNK) {
    const bytes = Buffer.from(content.slice(at, at + DECODE_CHUNK), 'base64');
    size += bytes.length;
    hash.update(bytes);
  }
  return { size, sha256: hash.digest('hex') };
}

export const createArtifact = defineOperation({
  name: 'artifacts_create',
  summary: 'Store a long body (text or binary) as an artifact, optionally attached to a task.',
  description:
    'Text as `content`, or bytes in base64 with `encoding: base64`; past BATON_ARTIFACT_MAX_BYTES decoded (25 MiB by default), 413.',
  kind: 'write',
  scope: 'artifacts:write',
  approval: 'none',
  toolset: 'work',
  http: { method: 'POST', path: '/artifacts', successStatus: 201, bodyLimit: 'artifact' },
  input: z.strictObject({
    content: z.string().describe('The body: text, or base64 when `encoding` is `base64`.'),
    encoding: z.enum(['utf8', 'base64']).default('utf8'),
    content_type: z.string().max(255).regex(MEDIA_TYPE, 'must be a media type such as text/markdown or application/pdf').optional()
      .describe('Defaults to `text/plain; charset=utf-8` for utf8 and `application/octet-stream` for base64.'),
    name: z.string().trim().min(1).max(200).optional().describe('A file name, for people.'),
    task_id: taskId.optional().describe('Attach the artifact to this task (its version increments).'),
  }),
  output: artifactOutput,
  async run(tx, ctx, input) {
    if (input.encoding === 'base64' && (input.content.length % 4 !== 0 || !BASE64.test(input.content))) {
      throw new BatonError('validation_failed', 'content is not valid base64.', { extra: { errors: [{ pointer: '/content', detail: 'not base64 (RFC 4648, with padding)', location: 'body' }] } });
    }
    const { size, sha256 } = digest(input.content, input.encoding);
    if (size > ctx.config.artifactMaxBytes) {
      throw new BatonError('payload_too_large', `The artifact is ${size} bytes; the limit is ${ctx.config.artifactMaxBytes}.`, {
        hint: 'Split the body into several artifacts, or ask the operator to raise BATON_ARTIFACT_MAX_BYTES.',
      });
    }
    if (input.task_id) {
      const task = await lockTask(tx, input.task_id);
      if (!task) throw new BatonError('not_found', `Task ${input.task_id} does not exist.`);
      if (task.artifacts.length >= TASK_ARTIFACTS_MAX) {
        throw new BatonError('conflict_state', `Task ${task.id} already holds ${task.artifacts.length} artifacts, the most one task holds.`, {
          hint: 'Bundle the bodies into one artifact (an archive or one document), or create this one without task_id and link it from a comment.',
        });
      }
      await updateTask(tx, task.id, { updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind });
    }
    const row = await insertArtifact(tx, {
      id: ctx.ids.make('art'),
      task_id: input.task_id ?? null,
      name: input.name ?? null,
      content_type: input.content_type ?? (input.encoding === 'utf8' ? 'text/plain; charset=utf-8' : 'application/octet-stream'),
      size_bytes: size,
      sha256,
      created_at: ctx.now,
      created_by_id: ctx.actor.id,
      created_by_kind: ctx.actor.kind,
    });
    await databaseArtifactStore.write(tx, row.id, input.encoding === 'base64' ? input.content : Buffer.from(input.content, 'utf8').toString('base64'));
    const artifact = toArtifact(row);
    ctx.emit({
      type: 'artifact.created',
      subject: row.task_id ?? row.id,
      data: { artifact_id: row.id, task_id: row.task_id, name: row.name, size: row.size_bytes, content_type: row.content_type, sha256: row.sha256 },
    });
    return artifact;
  },
});
