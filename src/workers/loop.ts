/** A background loop: runs `work` every `intervalMs` until stopped; a failing pass is reported, never fatal. */
export interface Loop {
  stop(): Promise<void>;
}

export function startLoop(intervalMs: number, work: () => Promise<unknown>, onError: (error: unknown) => void): Loop {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = work()
      .then(() => undefined, onError)
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
  };
  timer = setTimeout(tick, intervalMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
