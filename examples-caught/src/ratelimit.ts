// Per-tenant rate limiting with a token bucket.
//
// Each tenant owns one bucket holding up to `burst` requests. The bucket refills
// at `refillPerSecond`. A request drains one unit; an empty bucket means the
// tenant is throttled and gets HTTP 429 with a Retry-After header.

export interface RateLimitSettings {
  burst: number;            // bucket capacity
  refillPerSecond: number;  // sustained requests per second
  overrides?: Record<string, Partial<RateLimitSettings>>; // per tenant
}

interface Bucket {
  level: number;
  updatedAt: number; // epoch milliseconds
}

export interface Verdict {
  allowed: boolean;
  remaining: number;
  retryAfterSeconds: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly settings: RateLimitSettings) {}

  private limitsFor(tenantId: string): { burst: number; refillPerSecond: number } {
    const override = this.settings.overrides?.[tenantId] ?? {};
    return {
      burst: override.burst ?? this.settings.burst,
      refillPerSecond: override.refillPerSecond ?? this.settings.refillPerSecond,
    };
  }

  take(tenantId: string, now: number = Date.now()): Verdict {
    const { burst, refillPerSecond } = this.limitsFor(tenantId);
    const bucket = this.buckets.get(tenantId) ?? { level: burst, updatedAt: now };

    // Refill for the time elapsed since the last request, capped at the burst.
    const elapsedSeconds = (now - bucket.updatedAt) / 1000;
    bucket.level = Math.min(burst, bucket.level + elapsedSeconds * refillPerSecond);
    bucket.updatedAt = now;

    if (bucket.level < 1) {
      this.buckets.set(tenantId, bucket);
      const retryAfterSeconds = Math.ceil((1 - bucket.level) / refillPerSecond);
      return { allowed: false, remaining: 0, retryAfterSeconds };
    }

    bucket.level -= 1;
    this.buckets.set(tenantId, bucket);
    return { allowed: true, remaining: Math.floor(bucket.level), retryAfterSeconds: 0 };
  }
}
