// Optional ed25519 signatures of run cards (docs/run-card.md "Signatures"): the run_card_hash
// proves a card unedited, a signature says whose key sealed it. The signature lives in the card
// (`signature`), which the hash leaves out, so signing (at every write, or later by `card sign`)
// never changes the hash, and a card copied alone keeps it. `card verify --trusted-keys DIR` and
// the leaderboard check it against the public keys in DIR.
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { UsageError } from "../common/errors.js";

export const SIGNATURE_ALGORITHM = "ed25519";

export interface CardSignature {
  algorithm: typeof SIGNATURE_ALGORITHM;
  /** sha256 (hex) of the public key's DER (SubjectPublicKeyInfo): names the key. */
  key_id: string;
  /** The public key, DER (SubjectPublicKeyInfo) in base64: the signature checks without a key file. */
  public_key: string;
  /** ed25519 signature (base64) of signedText(run_card_hash). */
  value: string;
}

/** What is signed: the card's hash, under a label so the signature means nothing elsewhere. */
export function signedText(runCardHash: string): Buffer {
  return Buffer.from(`udm-orch run card ${runCardHash}`, "utf8");
}

/** The private ed25519 key of a PEM file (--sign-key); anything else is a UsageError naming the file. */
export function readSigningKey(path: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(readFileSync(path));
  } catch (err) {
    throw new UsageError(`--sign-key ${path}: not a readable private key in PEM: ${(err as Error).message}`);
  }
  if (key.asymmetricKeyType !== SIGNATURE_ALGORITHM) throw new UsageError(`--sign-key ${path}: an ${key.asymmetricKeyType ?? "unknown"} key; run cards are signed with ed25519 (openssl genpkey -algorithm ed25519)`);
  return key;
}

export function keyIdOf(publicKey: KeyObject): string {
  return createHash("sha256").update(publicKey.export({ type: "spki", format: "der" })).digest("hex");
}

/** The card (sealed) with its signature by `key`; the run_card_hash is unchanged. */
export function signCard<T extends { run_card_hash: string }>(card: T, key: KeyObject): T & { signature: CardSignature } {
  const pub = createPublicKey(key);
  const signature: CardSignature = {
    algorithm: SIGNATURE_ALGORITHM,
    key_id: keyIdOf(pub),
    public_key: pub.export({ type: "spki", format: "der" }).toString("base64"),
    value: sign(null, signedText(card.run_card_hash), key).toString("base64"),
  };
  return { ...card, signature };
}

export type SignatureCheck =
  | { state: "unsigned" }
  | { state: "valid"; keyId: string; trusted: boolean }
  | { state: "invalid"; problem: string };

/** The card's signature against its own run_card_hash (recomputed by the caller) and the trusted keys. */
export function checkSignature(raw: Record<string, unknown>, runCardHash: string, trusted: ReadonlyMap<string, KeyObject> | undefined): SignatureCheck {
  const sig = raw.signature as Partial<CardSignature> | undefined;
  if (sig === undefined) return { state: "unsigned" };
  if (sig === null || typeof sig !== "object" || sig.algorithm !== SIGNATURE_ALGORITHM || typeof sig.public_key !== "string" || typeof sig.value !== "string" || typeof sig.key_id !== "string") {
    return { state: "invalid", problem: `signature: not an ${SIGNATURE_ALGORITHM} signature block (algorithm, key_id, public_key, value)` };
  }
  let pub: KeyObject;
  try {
    pub = createPublicKey({ key: Buffer.from(sig.public_key, "base64"), format: "der", type: "spki" });
  } catch {
    return { state: "invalid", problem: "signature: public_key is not a DER public key in base64" };
  }
  if (pub.asymmetricKeyType !== SIGNATURE_ALGORITHM) return { state: "invalid", problem: `signature: public_key is an ${pub.asymmetricKeyType} key, not ${SIGNATURE_ALGORITHM}` };
  const keyId = keyIdOf(pub);
  if (keyId !== sig.key_id) return { state: "invalid", problem: `signature: key_id ${sig.key_id} is not the public key's (${keyId})` };
  if (!verify(null, signedText(runCardHash), pub, Buffer.from(sig.value, "base64"))) {
    return { state: "invalid", problem: `signature: does not match the card (signed by key ${keyId.slice(0, 16)}, but not this run_card_hash)` };
  }
  return { state: "valid", keyId, trusted: trusted?.has(keyId) ?? false };
}

/**
 * The public keys of a directory (--trusted-keys): each `*.pem` file holds one public key (a
 * private key's public half counts too), by key id. A file that holds no ed25519 key is a
 * UsageError naming it; a directory without any is one too.
 */
export function readTrustedKeys(dir: string): Map<string, KeyObject> {
  let names: string[];
  try {
    if (!statSync(dir).isDirectory()) throw new Error("not a directory");
    names = readdirSync(dir).filter((n) => n.endsWith(".pem")).sort();
  } catch (err) {
    throw new UsageError(`--trusted-keys ${dir}: ${(err as Error).message}`);
  }
  const keys = new Map<string, KeyObject>();
  for (const name of names) {
    const path = join(dir, name);
    let pub: KeyObject;
    try {
      const text = readFileSync(path);
      pub = /PRIVATE KEY/.test(text.toString("utf8")) ? createPublicKey(createPrivateKey(text)) : createPublicKey(text);
    } catch (err) {
      throw new UsageError(`--trusted-keys: ${path} is not a key in PEM: ${(err as Error).message}`);
    }
    if (pub.asymmetricKeyType !== SIGNATURE_ALGORITHM) throw new UsageError(`--trusted-keys: ${path} is an ${pub.asymmetricKeyType} key, not ${SIGNATURE_ALGORITHM}`);
    keys.set(keyIdOf(pub), pub);
  }
  if (keys.size === 0) throw new UsageError(`--trusted-keys ${dir}: no *.pem public key in it`);
  return keys;
}

/** The leaderboard's and verify's name for a card's signature: unsigned, signed-untrusted, signed-trusted (or invalid). */
export function signatureTier(check: SignatureCheck): "unsigned" | "signed-untrusted" | "signed-trusted" | "invalid signature" {
  if (check.state === "unsigned") return "unsigned";
  if (check.state === "invalid") return "invalid signature";
  return check.trusted ? "signed-trusted" : "signed-untrusted";
}
