// Pending approval store.
//
// Requests the policy parks as "pending" wait here for signatures. Each pending
// request carries an expiry (TTL); once it expires it can no longer be signed
// and the requester has to submit it again.

import type { ApprovalRequest } from "./policy";

interface PendingApproval {
  request: ApprovalRequest;
  requiredApprovers: number;
  signatures: Set<string>;
  expiresAt: number; // epoch milliseconds
}

export class ApprovalStore {
  private readonly pending = new Map<string, PendingApproval>();

  constructor(private readonly ttlSeconds: number) {}

  park(request: ApprovalRequest, requiredApprovers: number): void {
    this.pending.set(request.id, {
      request,
      requiredApprovers,
      signatures: new Set(),
      expiresAt: Date.now() + this.ttlSeconds * 1000,
    });
  }

  // Record one approver's signature. Returns true once the quorum is reached,
  // at which point the request leaves the store and may be forwarded.
  sign(requestId: string, approver: string): boolean {
    const entry = this.pending.get(requestId);
    if (!entry) throw new Error(`no pending approval ${requestId}`);
    if (Date.now() >= entry.expiresAt) {
      this.pending.delete(requestId);
      throw new Error(`approval ${requestId} expired; resubmit the request`);
    }
    entry.signatures.add(approver);
    if (entry.signatures.size >= entry.requiredApprovers) {
      this.pending.delete(requestId);
      return true;
    }
    return false;
  }

  // Sweep expired entries; called every minute by the gateway's timer.
  expireStale(now: number = Date.now()): string[] {
    const expired: string[] = [];
    for (const [id, entry] of this.pending) {
      if (now >= entry.expiresAt) {
        this.pending.delete(id);
        expired.push(id);
      }
    }
    return expired;
  }

  size(): number {
    return this.pending.size;
  }
}
