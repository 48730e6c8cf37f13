/** The caller's rate budget after this request, for the RateLimit response fields. */
export interface RateBudget {
  readonly limit: number;
  readonly remaining: number;
  readonly windowS: number;
  /** Seconds until the window resets. */
  readonly resetS: number;
}
