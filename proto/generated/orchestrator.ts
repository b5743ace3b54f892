import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { AgentMessage as _udm_v1_AgentMessage, AgentMessage__Output as _udm_v1_AgentMessage__Output } from './udm/v1/AgentMessage.js';
import type { AgentStatus as _udm_v1_AgentStatus, AgentStatus__Output as _udm_v1_AgentStatus__Output } from './udm/v1/AgentStatus.js';
import type { Cancel as _udm_v1_Cancel, Cancel__Output as _udm_v1_Cancel__Output } from './udm/v1/Cancel.js';
import type { CoordinatorClient as _udm_v1_CoordinatorClient, CoordinatorDefinition as _udm_v1_CoordinatorDefinition } from './udm/v1/Coordinator.js';
import type { CoordinatorMessage as _udm_v1_CoordinatorMessage, CoordinatorMessage__Output as _udm_v1_CoordinatorMessage__Output } from './udm/v1/CoordinatorMessage.js';
import type { Credit as _udm_v1_Credit, Credit__Output as _udm_v1_Credit__Output } from './udm/v1/Credit.js';
import type { Distribution as _udm_v1_Distribution, Distribution__Output as _udm_v1_Distribution__Output } from './udm/v1/Distribution.js';
import type { Drain as _udm_v1_Drain, Drain__Output as _udm_v1_Drain__Output } from './udm/v1/Drain.js';
import type { Heartbeat as _udm_v1_Heartbeat, Heartbeat__Output as _udm_v1_Heartbeat__Output } from './udm/v1/Heartbeat.js';
import type { Hello as _udm_v1_Hello, Hello__Output as _udm_v1_Hello__Output } from './udm/v1/Hello.js';
import type { MethodParams as _udm_v1_MethodParams, MethodParams__Output as _udm_v1_MethodParams__Output } from './udm/v1/MethodParams.js';
import type { Payload as _udm_v1_Payload, Payload__Output as _udm_v1_Payload__Output } from './udm/v1/Payload.js';
import type { RecordResult as _udm_v1_RecordResult, RecordResult__Output as _udm_v1_RecordResult__Output } from './udm/v1/RecordResult.js';
import type { ResultBatch as _udm_v1_ResultBatch, ResultBatch__Output as _udm_v1_ResultBatch__Output } from './udm/v1/ResultBatch.js';
import type { RunStatus as _udm_v1_RunStatus, RunStatus__Output as _udm_v1_RunStatus__Output } from './udm/v1/RunStatus.js';
import type { RunTotals as _udm_v1_RunTotals, RunTotals__Output as _udm_v1_RunTotals__Output } from './udm/v1/RunTotals.js';
import type { StatusRequest as _udm_v1_StatusRequest, StatusRequest__Output as _udm_v1_StatusRequest__Output } from './udm/v1/StatusRequest.js';
import type { TrackProgress as _udm_v1_TrackProgress, TrackProgress__Output as _udm_v1_TrackProgress__Output } from './udm/v1/TrackProgress.js';
import type { UnitDone as _udm_v1_UnitDone, UnitDone__Output as _udm_v1_UnitDone__Output } from './udm/v1/UnitDone.js';
import type { Usage as _udm_v1_Usage, Usage__Output as _udm_v1_Usage__Output } from './udm/v1/Usage.js';
import type { Welcome as _udm_v1_Welcome, Welcome__Output as _udm_v1_Welcome__Output } from './udm/v1/Welcome.js';
import type { WorkUnit as _udm_v1_WorkUnit, WorkUnit__Output as _udm_v1_WorkUnit__Output } from './udm/v1/WorkUnit.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  udm: {
    v1: {
      AgentMessage: MessageTypeDefinition<_udm_v1_AgentMessage, _udm_v1_AgentMessage__Output>
      AgentStatus: MessageTypeDefinition<_udm_v1_AgentStatus, _udm_v1_AgentStatus__Output>
      Cancel: MessageTypeDefinition<_udm_v1_Cancel, _udm_v1_Cancel__Output>
      Coordinator: SubtypeConstructor<typeof grpc.Client, _udm_v1_CoordinatorClient> & { service: _udm_v1_CoordinatorDefinition }
      CoordinatorMessage: MessageTypeDefinition<_udm_v1_CoordinatorMessage, _udm_v1_CoordinatorMessage__Output>
      Credit: MessageTypeDefinition<_udm_v1_Credit, _udm_v1_Credit__Output>
      Distribution: MessageTypeDefinition<_udm_v1_Distribution, _udm_v1_Distribution__Output>
      Drain: MessageTypeDefinition<_udm_v1_Drain, _udm_v1_Drain__Output>
      Heartbeat: MessageTypeDefinition<_udm_v1_Heartbeat, _udm_v1_Heartbeat__Output>
      Hello: MessageTypeDefinition<_udm_v1_Hello, _udm_v1_Hello__Output>
      MethodParams: MessageTypeDefinition<_udm_v1_MethodParams, _udm_v1_MethodParams__Output>
      Payload: MessageTypeDefinition<_udm_v1_Payload, _udm_v1_Payload__Output>
      RecordResult: MessageTypeDefinition<_udm_v1_RecordResult, _udm_v1_RecordResult__Output>
      ResultBatch: MessageTypeDefinition<_udm_v1_ResultBatch, _udm_v1_ResultBatch__Output>
      RunStatus: MessageTypeDefinition<_udm_v1_RunStatus, _udm_v1_RunStatus__Output>
      RunTotals: MessageTypeDefinition<_udm_v1_RunTotals, _udm_v1_RunTotals__Output>
      StatusRequest: MessageTypeDefinition<_udm_v1_StatusRequest, _udm_v1_StatusRequest__Output>
      TrackProgress: MessageTypeDefinition<_udm_v1_TrackProgress, _udm_v1_TrackProgress__Output>
      UnitDone: MessageTypeDefinition<_udm_v1_UnitDone, _udm_v1_UnitDone__Output>
      Usage: MessageTypeDefinition<_udm_v1_Usage, _udm_v1_Usage__Output>
      Welcome: MessageTypeDefinition<_udm_v1_Welcome, _udm_v1_Welcome__Output>
      WorkUnit: MessageTypeDefinition<_udm_v1_WorkUnit, _udm_v1_WorkUnit__Output>
    }
  }
}

