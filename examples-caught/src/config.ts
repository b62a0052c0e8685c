// Gateway configuration from environment variables.
//
// Every setting has a default suitable for local development. In production the
// deployment sets the GATEWAY_* variables (see docs/deploy.md). Invalid values
// fail fast at startup instead of surfacing as odd behaviour later.

import type { RateLimitSettings } from "./ratelimit";

export interface GatewayConfig {
  host: string;
  port: number;
  databaseUrl: string;
  approvalTtlSeconds: number;
  auditPath: string;
  webhookUrl?: string;
  webhookSecret?: string;
  rateLimit: RateLimitSettings;
}

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number.parseInt(raw, 10);
  if (!Number.isFinite(value) || value < 0) {
    throw new Error(`environment variable ${name} must be a non-negative integer, got "${raw}"`);
  }
  return value;
}

function requiredInProduction(name: string, fallback: string): string {
  const value = process.env[name];
  if (value) return value;
  if (process.env.NODE_ENV === "production") {
    throw new Error(`environment variable ${name} is required in production`);
  }
  return fallback;
}

export function loadConfig(): GatewayConfig {
  return {
    host: process.env.GATEWAY_HOST ?? "0.0.0.0",
    port: intFromEnv("GATEWAY_PORT", 8080),
    databaseUrl: requiredInProduction("GATEWAY_DATABASE_URL", "postgres://localhost:5432/gateway"),
    approvalTtlSeconds: intFromEnv("GATEWAY_APPROVAL_TTL_SECONDS", 86_400),
    auditPath: process.env.GATEWAY_AUDIT_PATH ?? "./audit.log.jsonl",
    webhookUrl: process.env.GATEWAY_WEBHOOK_URL,
    webhookSecret: process.env.GATEWAY_WEBHOOK_SECRET,
    rateLimit: {
      burst: intFromEnv("GATEWAY_RATE_BURST", 20),
      refillPerSecond: intFromEnv("GATEWAY_RATE_REFILL_PER_SECOND", 5),
    },
  };
}
