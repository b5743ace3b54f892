// sha256 hex digests of text and of files (streamed, so a large results file is not held in memory):
// the run card, its sealed results files and the sim hash with these.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";

export function sha256Hex(text: string | Buffer): string {
  return createHash("sha256").update(text).digest("hex");
}

export async function fileSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}
