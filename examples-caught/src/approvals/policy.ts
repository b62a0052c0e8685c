// Approval policy: turns a request into approve / deny / pending.
//
// Rules are evaluated in order. A request's risk tier decides how many
// distinct approvers (the quorum) must sign before it may proceed. Requesters
// can never approve their own request (separation of duties).

import type { Principal } from "../auth/tokens";

export type RiskTier = "low" | "medium" | "high" | "critical";

export interface ApprovalRequest {
  id: string;
  action: string;
  requester: string;
  riskTier: RiskTier;
  amountCents?: number;
}

export interface Decision {
  outcome: "approve" | "deny" | "pending";
  requiredApprovers: number;
  reason: string;
}

// Quorum per risk tier: how many approvers must sign off.
const QUORUM: Record<RiskTier, number> = {
  low: 0,       // auto-approve
  medium: 1,
  high: 2,
  critical: 3,  // plus an approver from the security group
};

// Requests above this amount are escalated one risk tier.
const ESCALATION_AMOUNT_CENTS = 5_000_000;

const DENIED_ACTIONS = new Set(["prod.db.drop", "iam.root.grant"]);

export function escalate(tier: RiskTier): RiskTier {
  const order: RiskTier[] = ["low", "medium", "high", "critical"];
  return order[Math.min(order.indexOf(tier) + 1, order.length - 1)];
}

export function decideApproval(request: ApprovalRequest, principal: Principal): Decision {
  if (DENIED_ACTIONS.has(request.action)) {
    return { outcome: "deny", requiredApprovers: 0, reason: "action is on the deny list" };
  }
  if (principal.subject !== request.requester && !principal.scopes.includes("approvals:submit-on-behalf")) {
    return { outcome: "deny", requiredApprovers: 0, reason: "cannot submit on behalf of another requester" };
  }

  let tier = request.riskTier;
  if ((request.amountCents ?? 0) > ESCALATION_AMOUNT_CENTS) {
    tier = escalate(tier);
  }

  const quorum = QUORUM[tier];
  if (quorum === 0) {
    return { outcome: "approve", requiredApprovers: 0, reason: "low risk: auto-approved" };
  }
  return { outcome: "pending", requiredApprovers: quorum, reason: `risk tier ${tier} needs ${quorum} approvers` };
}

export function canSign(approver: Principal, request: ApprovalRequest): boolean {
  // Separation of duties: the requester never counts towards the quorum.
  return approver.subject !== request.requester && approver.scopes.includes("approvals:sign");
}
