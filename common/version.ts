// The harness version recorded in results and run cards.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
function findVersion(): string {
  for (const p of ["../package.json", "../../package.json"]) {
    try {
      const pkg = require(p) as { name?: string; version?: string };
      if (pkg.name === "udm-orch" && pkg.version) return pkg.version;
    } catch {
      // try the next location (source tree vs dist/)
    }
  }
  return "0.0.0";
}
export const VERSION: string = findVersion();
