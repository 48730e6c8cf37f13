/** A background loop: runs `work` every `intervalMs` until stopped; a failing pass is reported, never fatal. */
export interface Loop {
  /** Runs a pass now (or right after the one running), instead of waiting out the interval. */
  wake(): void;
  stop(): Promise<void>;
}

export function startLoop(intervalMs: number, work: () => Promise<unknown>, onError: (error: unknown) => void): Loop {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let busy = false;
  let again = false;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    clearTimeout(timer);
    busy = true;
    running = work()
      .then(() => undefined, onError)
      .finally(() => {
        busy = false;
        if (stopped) return;
        if (again) {
          again = false;
          tick();
        } else {
          timer = setTimeout(tick, intervalMs);
        }
      });
  };
  timer = setTimeout(tick, intervalMs);
  return {
    wake() {
      if (stopped) return;
      if (busy) again = true;
      else tick();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
