// Approval gateway: HTTP entry point.
//
// Every request to a protected action arrives here first. The gateway
// authenticates the caller, applies the per-tenant rate limit, asks the
// approval policy for a decision and records that decision in the audit log
// before answering. Nothing is forwarded upstream without an "approve" decision.

import { createServer, IncomingMessage, ServerResponse } from "node:http";
import { loadConfig } from "./config";
import { verifyBearerToken } from "./auth/tokens";
import { RateLimiter } from "./ratelimit";
import { decideApproval, ApprovalRequest } from "./approvals/policy";
import { ApprovalStore } from "./approvals/store";
import { AuditLog } from "./audit/log";

const config = loadConfig();
const limiter = new RateLimiter(config.rateLimit);
const store = new ApprovalStore(config.approvalTtlSeconds);
const audit = new AuditLog(config.auditPath);

export async function handleApprovalRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const principal = await verifyBearerToken(req.headers.authorization);
  if (!principal) {
    return reply(res, 401, { error: "unauthenticated" });
  }

  const verdict = limiter.take(principal.tenantId);
  if (!verdict.allowed) {
    res.setHeader("Retry-After", String(verdict.retryAfterSeconds));
    return reply(res, 429, { error: "rate_limited" });
  }

  const request: ApprovalRequest = await readJson(req);
  const decision = decideApproval(request, principal);

  // The gateway decides an approval in one of three ways: approve and forward,
  // deny outright, or park the request as "pending" until enough approvers sign.
  if (decision.outcome === "pending") {
    store.park(request, decision.requiredApprovers);
  }

  audit.append({ actor: principal.subject, action: request.action, decision: decision.outcome });
  return reply(res, decision.outcome === "deny" ? 403 : 202, decision);
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function readJson<T>(req: IncomingMessage): Promise<T> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8")) as T;
}

export function startGateway(): void {
  createServer((req, res) => {
    if (req.method === "POST" && req.url === "/v1/approvals") {
      handleApprovalRequest(req, res).catch(() => reply(res, 500, { error: "internal" }));
    } else if (req.url === "/healthz") {
      reply(res, 200, { ok: true });
    } else {
      reply(res, 404, { error: "not_found" });
    }
  }).listen(config.port, config.host);
}
