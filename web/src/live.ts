import { BatonProblem } from '../../src/client/index.ts';
import { ApiProblem, call, sessionClient } from './api.ts';
import type { BatonEvent } from './types.ts';

/** How the feed is getting events: the SSE stream, polling (the spec's fallback), or not at all. */
export type FeedMode = 'connecting' | 'stream' | 'polling' | 'off';

const POLL_MS = 2000;
const RETRY_MS = 3000;

type Listener = (event: BatonEvent) => void;

/**
 * One live event feed per signed-in session. Follows `GET /events/stream` through the client
 * (`events.follow`: fetch, since EventSource cannot send a bearer header, resuming from the last id
 * seen after a drop, by the client's one reconnect policy); when the stream route does not exist it
 * polls `GET /events?since=` instead. Every event reaches every listener once, in timeline order.
 */
export class Feed {
  private readonly listeners = new Set<Listener>();
  private readonly modeListeners = new Set<(mode: FeedMode) => void>();
  private readonly abort = new AbortController();
  private cursor: string | null = null;
  mode: FeedMode = 'connecting';

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onMode(listener: (mode: FeedMode) => void): () => void {
    this.modeListeners.add(listener);
    return () => this.modeListeners.delete(listener);
  }

  /**
   * Reads where the feed starts ("now") before it resolves, then follows in the background. A view
   * that reads its own state after this misses no later change: everything after the state it read
   * comes after the feed's start. (A failed read is left to the loop, which retries it.)
   */
  async start(): Promise<void> {
    try {
      this.cursor = await latestCursor();
    } catch {
      // The loop reads it again, or turns the feed off on 401/403.
    }
    void this.run();
  }

  stop(): void {
    this.abort.abort();
  }

  private setMode(mode: FeedMode): void {
    this.mode = mode;
    for (const listener of this.modeListeners) listener(mode);
  }

  private emit(event: BatonEvent): void {
    this.cursor = event.id;
    for (const listener of this.listeners) listener(event);
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      try {
        // Start from "now" (read by `start` unless that failed): views read their own state, the feed only tells them what changed after.
        this.cursor ??= await latestCursor();
        const streamed = await this.readStream(signal);
        if (!streamed) return await this.poll(signal);
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof ApiProblem && (error.problem.status === 401 || error.problem.status === 403)) return this.setMode('off');
      }
      this.setMode('connecting');
      await pause(RETRY_MS, signal);
    }
  }

  /**
   * Follows the stream until `signal` aborts (the client reconnects after a drop by itself); false
   * when the server has no stream route. A refusal the client does not retry (401, 403) is thrown.
   */
  private async readStream(signal: AbortSignal): Promise<boolean> {
    const events = sessionClient.events.follow(this.cursor ? { since: this.cursor } : {}, {
      signal,
      onOpen: () => this.setMode('stream'),
      onReconnect: () => this.setMode('connecting'),
    });
    try {
      for await (const event of events) this.emit(event as BatonEvent);
    } catch (error) {
      if (!(error instanceof BatonProblem)) throw error;
      if (error.status === 404) return false;
      throw new ApiProblem({ code: 'stream', title: 'The event stream failed', status: error.status });
    }
    return true;
  }

  private async poll(signal: AbortSignal): Promise<void> {
    this.setMode('polling');
    while (!signal.aborted) {
      try {
        const page = await call('events_list', { limit: 100, ...(this.cursor ? { since: this.cursor } : {}) });
        for (const event of page.data) this.emit(event as BatonEvent);
        if (page.has_more) continue;
        if (this.mode !== 'polling') this.setMode('polling');
      } catch (error) {
        if (error instanceof ApiProblem && (error.problem.status === 401 || error.problem.status === 403)) return this.setMode('off');
        this.setMode('connecting');
      }
      await pause(POLL_MS, signal);
    }
  }
}

/** Where the timeline stands now: the feed's start. */
async function latestCursor(): Promise<string | null> {
  return (await call('events_list', { order: 'desc', limit: 1 })).sync_cursor;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
