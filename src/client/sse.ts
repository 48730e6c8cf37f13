/** One Server-Sent Events frame: its `id:` (if the frame set one), `event:` and joined `data:` lines. */
export interface SseFrame {
  readonly id: string | undefined;
  readonly event: string | undefined;
  readonly data: string;
}

/**
 * Parses a text stream of Server-Sent Events into frames, as the HTML standard's event stream
 * interpretation does: lines end in CRLF, LF or CR; `:` lines are comments (the server's pings);
 * a blank line ends a frame, which is dispatched if it carried data; `retry:` is reported through
 * `onRetry`. Written here rather than depended on so the client package has no runtime dependency
 * and runs wherever there are web streams (Node 20, browsers).
 */
export class SseParserStream extends TransformStream<string, SseFrame> {
  constructor(options: { onRetry?: (ms: number) => void } = {}) {
    let pending = '';
    let started = false;
    let data: string[] = [];
    let id: string | undefined;
    let event: string | undefined;
    const line = (text: string, emit: (frame: SseFrame) => void) => {
      if (text === '') {
        if (data.length > 0) emit({ id, event, data: data.join('\n') });
        data = [];
        id = undefined;
        event = undefined;
        return;
      }
      if (text.startsWith(':')) return;
      const colon = text.indexOf(':');
      const field = colon < 0 ? text : text.slice(0, colon);
      const value = colon < 0 ? '' : text.slice(colon + (text[colon + 1] === ' ' ? 2 : 1));
      if (field === 'data') data.push(value);
      else if (field === 'event') event = value;
      else if (field === 'id' && !value.includes('\0')) id = value;
      else if (field === 'retry' && /^\d+$/.test(value)) options.onRetry?.(Number(value));
    };
    super({
      transform(chunk, controller) {
        pending += chunk;
        if (!started && pending.length > 0) {
          started = true;
          if (pending.startsWith('\uFEFF')) pending = pending.slice(1);
        }
        // A CR at the very end may be the first half of a CRLF: keep it for the next chunk.
        const lines = pending.split(/\r\n|\n|\r(?!$)/);
        pending = lines.pop() ?? '';
        for (const text of lines) line(text, (frame) => controller.enqueue(frame));
      },
      flush(controller) {
        // An unterminated last frame is dropped, as the standard says.
        if (pending.endsWith('\r')) line(pending.slice(0, -1), (frame) => controller.enqueue(frame));
      },
    });
  }
}
