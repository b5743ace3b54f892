// A probe for startup-bench (issue 26): attaches to a coordinator like an agent as soon as its port
// is open, retrying while it is refused ("starting"), grants one unit of credit, and resolves with
// the time its first WorkUnit arrives: the time to first unit an agent of a real cluster sees.
import * as grpc from "@grpc/grpc-js";
import { loadPackageDefinition, type ProtoGrpcType } from "../proto/loader.js";
import type { CoordinatorMessage__Output } from "../proto/generated/udm/v1/CoordinatorMessage.js";

const proto = grpc.loadPackageDefinition(loadPackageDefinition()) as unknown as ProtoGrpcType;

/** performance.now() when the first WorkUnit arrived; retries every `retryMs` until then or until stop(). */
export function firstUnitProbe(address: string, retryMs = 50): { firstUnitAt: Promise<number>; stop: () => void } {
  const client = new proto.udm.v1.Coordinator(address, grpc.credentials.createInsecure());
  let stopped = false;
  let call: grpc.ClientDuplexStream<unknown, CoordinatorMessage__Output> | undefined;
  const firstUnitAt = new Promise<number>((resolve) => {
    const attach = () => {
      if (stopped) return;
      const c = client.Attach(new grpc.Metadata()) as unknown as grpc.ClientDuplexStream<unknown, CoordinatorMessage__Output>;
      call = c;
      let retried = false;
      const retry = () => {
        if (retried) return;
        retried = true;
        setTimeout(attach, retryMs);
      };
      c.on("data", (msg: CoordinatorMessage__Output) => {
        if (msg.unit) {
          resolve(performance.now());
          stopped = true;
          c.cancel();
        }
      });
      c.on("error", retry);
      c.on("status", retry);
      c.write({ hello: { agent_id: "first-unit-probe", model: "sim/probe", methods: ["systemone", "label-read"], capacity: 1, ready: true, engine_url: "http://127.0.0.1:1", instance: "" } });
      c.write({ credit: { units: 1 } });
    };
    attach();
  });
  return {
    firstUnitAt,
    stop: () => {
      stopped = true;
      call?.cancel();
      client.close();
    },
  };
}
