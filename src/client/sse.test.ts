import { describe, expect, it } from 'vitest';
import { type SseFrame, SseParserStream } from './sse.ts';

async function parse(chunks: string[], onRetry?: (ms: number) => void): Promise<SseFrame[]> {
  const frames: SseFrame[] = [];
  const input = new ReadableStream<string>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const reader = input.pipeThrough(new SseParserStream(onRetry ? { onRetry } : {})).getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) frames.push(next.value);
  return frames;
}

describe('SseParserStream', () => {
  it('splits frames on blank lines, joins data lines and keeps id and event', async () => {
    expect(await parse(['\uFEFFid: evt_1\nevent: task.created\ndata: {"a":\ndata: 1}\n\n', ': ping\n\n', 'data:x\n\n'])).toEqual([
      { id: 'evt_1', event: 'task.created', data: '{"a":\n1}' },
      { id: undefined, event: undefined, data: 'x' },
    ]);
  });

  it('reads CRLF and CR line ends split across chunks, and reports retry', async () => {
    const retries: number[] = [];
    expect(await parse(['retry: 2500\r', '\nid: 7\rdata: a\r', '\r', 'data: b\r\n', '\r\ndata: never ended\n'], (ms) => retries.push(ms))).toEqual([
      { id: '7', event: undefined, data: 'a' },
      { id: undefined, event: undefined, data: 'b' },
    ]);
    expect(retries).toEqual([2500]);
  });
});
