// autocannon ships no types; this declares only the surface bench/ uses (autocannon 9 README, "API").
declare module 'autocannon' {
  export interface Histogram {
    average: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
  }

  export interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    /** Called before every request when present; returns the request to send. */
    setupRequest?: (request: Request, context: Record<string, unknown>) => Request;
  }

  export interface Options {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    /** Seconds before a request counts as a timeout (and an error). */
    timeout?: number;
    requests?: Request[];
    /** Requests per second over all connections (0: as fast as answers come). */
    overallRate?: number;
  }

  export interface Result {
    requests: Histogram & { total: number; sent: number };
    /** Milliseconds. */
    latency: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
  }

  export default function autocannon(options: Options): Promise<Result>;
}
