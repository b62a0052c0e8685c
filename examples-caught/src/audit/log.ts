// Append-only audit log with a hash chain.
//
// Every decision the gateway makes is written as one JSON line. Each record
// stores the SHA-256 digest of the previous record, so editing or deleting a
// line breaks the chain: the log is tamper-evident. `verifyChain` walks the file
// and reports the first record whose digest does not match.

import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { createHash } from "node:crypto";

export interface AuditEvent {
  actor: string;
  action: string;
  decision: string;
}

interface AuditRecord extends AuditEvent {
  seq: number;
  timestamp: string;  // ISO 8601, UTC
  prevDigest: string; // digest of the previous record ("genesis" for the first)
  digest: string;
}

function digestOf(record: Omit<AuditRecord, "digest">): string {
  return createHash("sha256").update(JSON.stringify(record)).digest("hex");
}

export class AuditLog {
  private seq = 0;
  private lastDigest = "genesis";

  constructor(private readonly path: string) {
    if (existsSync(path)) {
      const lines = readFileSync(path, "utf8").trim().split("\n").filter(Boolean);
      const last = lines.length ? (JSON.parse(lines[lines.length - 1]) as AuditRecord) : undefined;
      if (last) {
        this.seq = last.seq;
        this.lastDigest = last.digest;
      }
    }
  }

  append(event: AuditEvent): AuditRecord {
    const body = { ...event, seq: this.seq + 1, timestamp: new Date().toISOString(), prevDigest: this.lastDigest };
    const record: AuditRecord = { ...body, digest: digestOf(body) };
    appendFileSync(this.path, JSON.stringify(record) + "\n", { mode: 0o600 });
    this.seq = record.seq;
    this.lastDigest = record.digest;
    return record;
  }
}

// Returns the sequence number of the first tampered record, or null if intact.
export function verifyChain(path: string): number | null {
  let prev = "genesis";
  for (const line of readFileSync(path, "utf8").split("\n").filter(Boolean)) {
    const { digest, ...body } = JSON.parse(line) as AuditRecord;
    if (body.prevDigest !== prev || digestOf(body) !== digest) return body.seq;
    prev = digest;
  }
  return null;
}
