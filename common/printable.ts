// Text from elsewhere (a coordinator's status, a card's model name, an agent id) printed to a
// terminal: control characters (C0, ESC, DEL, C1) are shown as escapes, so a crafted name cannot
// move the cursor, retitle the window or clear the screen.

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** `s` with every control character as `\xNN` (newlines and tabs included: one field stays on one line). */
export function printable(s: string): string {
  return s.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** A whole multi-line text: like printable, but keeps its newlines. */
export function printableLines(s: string): string {
  return s.split("\n").map(printable).join("\n");
}
