// Original file: proto/udm/v1/orchestrator.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { AgentMessage as _udm_v1_AgentMessage, AgentMessage__Output as _udm_v1_AgentMessage__Output } from '../../udm/v1/AgentMessage.js';
import type { CoordinatorMessage as _udm_v1_CoordinatorMessage, CoordinatorMessage__Output as _udm_v1_CoordinatorMessage__Output } from '../../udm/v1/CoordinatorMessage.js';
import type { RunStatus as _udm_v1_RunStatus, RunStatus__Output as _udm_v1_RunStatus__Output } from '../../udm/v1/RunStatus.js';
import type { StatusRequest as _udm_v1_StatusRequest, StatusRequest__Output as _udm_v1_StatusRequest__Output } from '../../udm/v1/StatusRequest.js';

export interface CoordinatorClient extends grpc.Client {
  /**
   * One long-lived stream per agent. The agent opens with Hello, then grants Credit; the
   * coordinator answers Welcome and sends at most as many WorkUnits as credited.
   */
  Attach(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_udm_v1_AgentMessage, _udm_v1_CoordinatorMessage__Output>;
  Attach(options?: grpc.CallOptions): grpc.ClientDuplexStream<_udm_v1_AgentMessage, _udm_v1_CoordinatorMessage__Output>;
  /**
   * One long-lived stream per agent. The agent opens with Hello, then grants Credit; the
   * coordinator answers Welcome and sends at most as many WorkUnits as credited.
   */
  attach(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_udm_v1_AgentMessage, _udm_v1_CoordinatorMessage__Output>;
  attach(options?: grpc.CallOptions): grpc.ClientDuplexStream<_udm_v1_AgentMessage, _udm_v1_CoordinatorMessage__Output>;
  
  /**
   * Progress of the run, for the CLI and probes.
   */
  Status(argument: _udm_v1_StatusRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_udm_v1_RunStatus__Output>): grpc.ClientUnaryCall;
  Status(argument: _udm_v1_StatusRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_udm_v1_RunStatus__Output>): grpc.ClientUnaryCall;
  Status(argument: _udm_v1_StatusRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_udm_v1_RunStatus__Output>): grpc.ClientUnaryCall;
  Status(argument: _udm_v1_StatusRequest, callback: grpc.requestCallback<_udm_v1_RunStatus__Output>): grpc.ClientUnaryCall;
  /**
   * Progress of the run, for the CLI and probes.
   */
  status(argument: _udm_v1_StatusRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_udm_v1_RunStatus__Output>): grpc.ClientUnaryCall;
  status(argument: _udm_v1_StatusRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_udm_v1_RunStatus__Output>): grpc.ClientUnaryCall;
  status(argument: _udm_v1_StatusRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_udm_v1_RunStatus__Output>): grpc.ClientUnaryCall;
  status(argument: _udm_v1_StatusRequest, callback: grpc.requestCallback<_udm_v1_RunStatus__Output>): grpc.ClientUnaryCall;
  
}

export interface CoordinatorHandlers extends grpc.UntypedServiceImplementation {
  /**
   * One long-lived stream per agent. The agent opens with Hello, then grants Credit; the
   * coordinator answers Welcome and sends at most as many WorkUnits as credited.
   */
  Attach: grpc.handleBidiStreamingCall<_udm_v1_AgentMessage__Output, _udm_v1_CoordinatorMessage>;
  
  /**
   * Progress of the run, for the CLI and probes.
   */
  Status: grpc.handleUnaryCall<_udm_v1_StatusRequest__Output, _udm_v1_RunStatus>;
  
}

export interface CoordinatorDefinition extends grpc.ServiceDefinition {
  Attach: MethodDefinition<_udm_v1_AgentMessage, _udm_v1_CoordinatorMessage, _udm_v1_AgentMessage__Output, _udm_v1_CoordinatorMessage__Output>
  Status: MethodDefinition<_udm_v1_StatusRequest, _udm_v1_RunStatus, _udm_v1_StatusRequest__Output, _udm_v1_RunStatus__Output>
}
