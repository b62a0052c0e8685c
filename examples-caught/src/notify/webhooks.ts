// Outbound webhooks: tell subscribers when an approval is granted or expires.
//
// Each delivery is an HTTPS POST signed with HMAC-SHA256 over the raw body
// (header X-Gateway-Signature). Failed deliveries are retried with exponential
// backoff and jitter; after the last attempt the event goes to the dead-letter
// queue so an operator can replay it.

import { createHmac, randomUUID } from "node:crypto";

export interface WebhookEvent {
  type: "approval.granted" | "approval.denied" | "approval.expired";
  requestId: string;
  occurredAt: string;
}

const MAX_ATTEMPTS = 6;
const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 60_000;

export const deadLetters: Array<{ deliveryId: string; event: WebhookEvent; lastStatus: number }> = [];

export function signPayload(secret: string, body: string): string {
  return "sha256=" + createHmac("sha256", secret).update(body).digest("hex");
}

export function backoffDelay(attempt: number): number {
  // 500 ms, 1 s, 2 s, 4 s ... capped, with up to 20 % random jitter.
  const exponential = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (attempt - 1));
  return exponential + Math.random() * exponential * 0.2;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function deliver(url: string, secret: string, event: WebhookEvent): Promise<boolean> {
  const deliveryId = randomUUID();
  const body = JSON.stringify(event);
  let lastStatus = 0;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-gateway-delivery": deliveryId,
          "x-gateway-signature": signPayload(secret, body),
        },
        body,
      });
      lastStatus = response.status;
      if (response.ok) return true;
      if (response.status >= 400 && response.status < 500 && response.status !== 429) break; // subscriber rejected it
    } catch {
      lastStatus = 0; // network error: retry
    }
    await sleep(backoffDelay(attempt));
  }
  deadLetters.push({ deliveryId, event, lastStatus });
  return false;
}
