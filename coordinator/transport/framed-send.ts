// Lets grpc-js send a work unit's buffer as it is. grpc-js frames every message it sends into a
// new buffer (BaseServerInterceptingCall's serializeMessage: `Buffer.allocUnsafe(length + 5)`, then
// a copy): for units that is the whole suite's payloads copied once more on the coordinator's
// thread, and ~400 MB of memory outside the V8 heap that V8 counts toward the thread's heap limit
// until a mark-compact (unit-buffer-pool.ts says why that matters). An EncodedUnit carries its
// frame already (work-unit-encoder.ts), so its frame is handed to the HTTP/2 stream unchanged;
// every other message is framed by grpc-js itself. The frame's buffer goes back to the pool when
// the stream's write calls back, which HTTP/2 does once the bytes are on the socket.
//
// serializeMessage is not public API: the hook is installed only where the class has it, and
// test/coordinator/framed-send.test.ts fails on a grpc-js without it (units then take grpc-js's
// copy, which still sends them correctly).
import { BaseServerInterceptingCall } from "@grpc/grpc-js/build/src/server-interceptors.js";
import { EncodedUnit } from "./work-unit-encoder.js";

type Serialize = (this: unknown, value: unknown) => Buffer;
const prototype = BaseServerInterceptingCall.prototype as unknown as { serializeMessage?: Serialize };
const HOOKED = Symbol.for("udm-orch.framed-send");

function install(): boolean {
  const frameOf = prototype.serializeMessage;
  if (typeof frameOf !== "function") return false;
  if ((frameOf as { [HOOKED]?: true })[HOOKED]) return true;
  const hooked: Serialize = function (this: unknown, value: unknown) {
    return value instanceof EncodedUnit ? value.framed : frameOf.call(this, value);
  };
  Object.defineProperty(hooked, HOOKED, { value: true });
  prototype.serializeMessage = hooked;
  return true;
}

/** Whether work units go out without grpc-js's copy (installed when this module loads). */
export const framedSendInstalled = install();
