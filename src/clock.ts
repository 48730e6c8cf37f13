/** The server's clock. Timestamps are always taken here, never from a client. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
