// Bearer token verification (JWT, RS256).
//
// Tokens are signed by the identity provider. We fetch its JWKS, cache the
// public keys by key id ("kid") and refresh the cache when a token names a kid
// we have not seen: that is how signing key rotation reaches the gateway
// without a restart.

import { createPublicKey, createVerify, KeyObject } from "node:crypto";

export interface Principal {
  subject: string;
  tenantId: string;
  scopes: string[];
}

const JWKS_URL = process.env.GATEWAY_JWKS_URL ?? "https://idp.internal/.well-known/jwks.json";
const CLOCK_SKEW_SECONDS = 60;
const keyCache = new Map<string, KeyObject>();

async function refreshJwks(): Promise<void> {
  const response = await fetch(JWKS_URL);
  const jwks = (await response.json()) as { keys: Array<{ kid: string } & Record<string, string>> };
  keyCache.clear();
  for (const jwk of jwks.keys) {
    keyCache.set(jwk.kid, createPublicKey({ key: jwk, format: "jwk" }));
  }
}

function decodeSegment<T>(segment: string): T {
  return JSON.parse(Buffer.from(segment, "base64url").toString("utf8")) as T;
}

export async function verifyBearerToken(header: string | undefined): Promise<Principal | null> {
  if (!header?.startsWith("Bearer ")) return null;
  const [headerB64, payloadB64, signatureB64] = header.slice(7).split(".");
  const jwtHeader = decodeSegment<{ alg: string; kid: string }>(headerB64);
  if (jwtHeader.alg !== "RS256") return null;

  // Unknown kid: the signing key was rotated; refresh the JWKS once.
  if (!keyCache.has(jwtHeader.kid)) await refreshJwks();
  const key = keyCache.get(jwtHeader.kid);
  if (!key) return null;

  const verifier = createVerify("RSA-SHA256");
  verifier.update(`${headerB64}.${payloadB64}`);
  if (!verifier.verify(key, Buffer.from(signatureB64, "base64url"))) return null;

  const claims = decodeSegment<{ sub: string; tid: string; scope: string; exp: number; aud: string }>(payloadB64);
  const now = Math.floor(Date.now() / 1000);
  if (claims.exp + CLOCK_SKEW_SECONDS < now) return null; // expired token
  if (claims.aud !== "approval-gateway") return null;     // wrong audience

  return { subject: claims.sub, tenantId: claims.tid, scopes: claims.scope.split(" ") };
}
