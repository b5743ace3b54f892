// Original file: proto/udm/v1/orchestrator.proto


export interface StatusRequest {
}

export interface StatusRequest__Output {
}
