{{/* Names, labels and the pieces of the udm-orch command lines shared by the templates. */}}

{{- define "udm-orch.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "udm-orch.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "udm-orch.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object; call with (dict "ctx" $ "component" "coordinator"). */}}
{{- define "udm-orch.labels" -}}
helm.sh/chart: {{ include "udm-orch.chart" .ctx }}
{{ include "udm-orch.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/part-of: udm-orch
{{- end }}

{{- define "udm-orch.selectorLabels" -}}
app.kubernetes.io/name: {{ include "udm-orch.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "udm-orch.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "udm-orch.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "udm-orch.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "udm-orch.coordinatorService" -}}
{{- printf "%s-coordinator" (include "udm-orch.fullname" .) }}
{{- end }}

{{/* host:port agents and status clients dial. */}}
{{- define "udm-orch.coordinatorAddress" -}}
{{- printf "%s.%s.svc:%d" (include "udm-orch.coordinatorService" .) .Release.Namespace (int .Values.coordinator.grpcPort) }}
{{- end }}

{{- define "udm-orch.natsService" -}}
{{- printf "%s-nats" (include "udm-orch.fullname" .) }}
{{- end }}

{{/* The NATS URL, or "" when the run has no NATS. */}}
{{- define "udm-orch.natsUrl" -}}
{{- if .Values.nats.enabled }}
{{- printf "nats://%s.%s.svc:%d" (include "udm-orch.natsService" .) .Release.Namespace (int .Values.nats.port) }}
{{- else }}
{{- .Values.externalNats.url }}
{{- end }}
{{- end }}

{{/* The token Secret: auth.existingSecret, else the chart's (auth.token, or a random token). Never empty. */}}
{{- define "udm-orch.tokenSecretName" -}}
{{- if .Values.auth.existingSecret }}
{{- .Values.auth.existingSecret }}
{{- else }}
{{- printf "%s-token" (include "udm-orch.fullname" .) }}
{{- end }}
{{- end }}

{{/*
The token the chart's Secret holds: auth.token, else the one the live Secret already holds (an
upgrade keeps it: lookup), else a new random one. Memoized in .Values so every object of one render
sees the same value.
*/}}
{{- define "udm-orch.tokenValue" -}}
{{- if not (hasKey .Values "__udmToken") }}
{{- $token := .Values.auth.token }}
{{- if not $token }}
{{- $live := lookup "v1" "Secret" .Release.Namespace (include "udm-orch.tokenSecretName" .) | default dict }}
{{- $token = dig "data" "token" "" $live | b64dec }}
{{- end }}
{{- $_ := set .Values "__udmToken" (default (randAlphaNum 40) $token) }}
{{- end }}
{{- get .Values "__udmToken" }}
{{- end }}

{{- define "udm-orch.tokenSecretKey" -}}
{{- if .Values.auth.existingSecret }}{{ .Values.auth.existingSecretKey }}{{ else }}token{{ end }}
{{- end }}

{{/* UDM_TOKEN from the token Secret: every udm-orch flag reads UDM_<FLAG>, so --token stays off the command line. */}}
{{- define "udm-orch.tokenEnv" -}}
{{- if include "udm-orch.tokenSecretName" . }}
- name: UDM_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "udm-orch.tokenSecretName" . }}
      key: {{ include "udm-orch.tokenSecretKey" . }}
{{- end }}
{{- end }}

{{/* --nats and its credentials and TLS flags (coordinator and scorer). */}}
{{- define "udm-orch.natsArgs" -}}
{{- $url := include "udm-orch.natsUrl" . }}
{{- if $url }}
- --nats
- {{ $url | quote }}
{{- if and (not .Values.nats.enabled) .Values.externalNats.credentialsSecret }}
- --nats-creds
- /etc/udm-orch/nats-creds/{{ .Values.externalNats.credentialsKey }}
{{- end }}
{{- if and (not .Values.nats.enabled) .Values.externalNats.tlsCaSecret }}
- --nats-tls-ca
- /etc/udm-orch/nats-tls/ca.crt
{{- end }}
{{- end }}
{{- end }}

{{- define "udm-orch.natsVolumeMounts" -}}
{{- if and (not .Values.nats.enabled) .Values.externalNats.credentialsSecret }}
- name: nats-creds
  mountPath: /etc/udm-orch/nats-creds
  readOnly: true
{{- end }}
{{- if and (not .Values.nats.enabled) .Values.externalNats.tlsCaSecret }}
- name: nats-tls
  mountPath: /etc/udm-orch/nats-tls
  readOnly: true
{{- end }}
{{- end }}

{{- define "udm-orch.natsVolumes" -}}
{{- if and (not .Values.nats.enabled) .Values.externalNats.credentialsSecret }}
- name: nats-creds
  secret:
    secretName: {{ .Values.externalNats.credentialsSecret }}
{{- end }}
{{- if and (not .Values.nats.enabled) .Values.externalNats.tlsCaSecret }}
- name: nats-tls
  secret:
    secretName: {{ .Values.externalNats.tlsCaSecret }}
{{- end }}
{{- end }}

{{/* The suite volume (read-only) of the coordinator and the scorer. */}}
{{- define "udm-orch.suiteVolume" -}}
- name: suite
  persistentVolumeClaim:
    claimName: {{ required "suite.existingClaim: the PersistentVolumeClaim holding the suite is required" .Values.suite.existingClaim }}
    readOnly: true
{{- end }}

{{- define "udm-orch.suiteVolumeMount" -}}
- name: suite
  mountPath: {{ .Values.suite.mountPath }}
  readOnly: true
  {{- with .Values.suite.subPath }}
  subPath: {{ . }}
  {{- end }}
{{- end }}

{{/* Flags of a client of the coordinator's TLS (agents, the helm test). */}}
{{- define "udm-orch.clientTlsArgs" -}}
{{- if .Values.tls.enabled }}
- --tls-ca
- /etc/udm-orch/tls/ca.crt
{{- if .Values.tls.mtls }}
- --tls-cert
- /etc/udm-orch/client-tls/tls.crt
- --tls-key
- /etc/udm-orch/client-tls/tls.key
{{- end }}
{{- end }}
{{- end }}

{{- define "udm-orch.clientTlsVolumeMounts" -}}
{{- if .Values.tls.enabled }}
- name: tls
  mountPath: /etc/udm-orch/tls
  readOnly: true
{{- if .Values.tls.mtls }}
- name: client-tls
  mountPath: /etc/udm-orch/client-tls
  readOnly: true
{{- end }}
{{- end }}
{{- end }}

{{- define "udm-orch.clientTlsVolumes" -}}
{{- if .Values.tls.enabled }}
- name: tls
  secret:
    secretName: {{ required "tls.existingSecret is required when tls.enabled" .Values.tls.existingSecret }}
    items:
      - key: ca.crt
        path: ca.crt
{{- if .Values.tls.mtls }}
- name: client-tls
  secret:
    secretName: {{ required "tls.clientSecret is required when tls.mtls" .Values.tls.clientSecret }}
{{- end }}
{{- end }}
{{- end }}

{{/*
When the token changes, pods that read it must restart. Their annotation udm-orch/token-revision
changes with it, yet says nothing about the token (a digest of a weak token is guessed offline):
- auth.existingSecret: the Secret's resourceVersion (read before this release is applied);
- the chart's Secret: the revision it carries, kept while the token is the same, else a new random one.
Computed once per render (memoized in .Values) so every object gets the same value.
*/}}
{{- define "udm-orch.tokenRevision" -}}
{{- if not (hasKey .Values "__udmTokenRevision") }}
{{- $rev := "none" }}
{{- $name := include "udm-orch.tokenSecretName" . }}
{{- if $name }}
{{- $live := lookup "v1" "Secret" .Release.Namespace $name | default dict }}
{{- if .Values.auth.existingSecret }}
{{- $rev = dig "metadata" "resourceVersion" "unknown" $live }}
{{- else }}
{{- $prev := dig "metadata" "annotations" "udm-orch/token-revision" "" $live }}
{{- $same := eq (dig "data" "token" "" $live) (include "udm-orch.tokenValue" . | b64enc) }}
{{- $rev = ternary $prev (randAlphaNum 16 | lower) (and $same (ne $prev "")) }}
{{- end }}
{{- end }}
{{- $_ := set .Values "__udmTokenRevision" $rev }}
{{- end }}
{{- get .Values "__udmTokenRevision" }}
{{- end }}

{{- define "udm-orch.tokenRevisionAnnotation" -}}
udm-orch/token-revision: {{ include "udm-orch.tokenRevision" . | quote }}
{{- end }}

{{/* The Secret with the in-chart NATS server's per-role passwords ("" when NATS is external or open). */}}
{{- define "udm-orch.natsAuthSecretName" -}}
{{- if and .Values.nats.enabled .Values.nats.auth.enabled }}
{{- default (printf "%s-nats-auth" (include "udm-orch.fullname" .)) .Values.nats.auth.existingSecret }}
{{- end }}
{{- end }}

{{/*
UDM_NATS_USER and UDM_NATS_PASS (read by --nats-user/--nats-pass) of one role, "coordinator" or
"scorer": (dict "ctx" . "role" "scorer"). Each role has its own NATS user, so the scorer's
credentials cannot publish results (nats.yaml's permissions).
*/}}
{{- define "udm-orch.natsAuthEnv" -}}
{{- $ctx := .ctx }}
{{- with include "udm-orch.natsAuthSecretName" $ctx }}
- name: UDM_NATS_USER
  value: {{ printf "udm-%s" $.role | quote }}
- name: UDM_NATS_PASS
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ get $ctx.Values.nats.auth (printf "%sPasswordKey" $.role) }}
{{- end }}
{{- end }}

{{/* Job mode of the coordinator and the scorer: run.afterComplete exit, or a sweep (which exits when done). */}}
{{- define "udm-orch.jobMode" -}}
{{- if or (eq .Values.run.afterComplete "exit") .Values.sweep.enabled }}true{{ end }}
{{- end }}

{{/* priorityClassName and runtimeClassName of a pod: (dict "ctx" . "priority" $c.priorityClassName "runtime" "..."). */}}
{{- define "udm-orch.podClasses" -}}
{{- with default .ctx.Values.priorityClassName .priority }}
priorityClassName: {{ . | quote }}
{{- end }}
{{- with default .ctx.Values.runtimeClassName .runtime }}
runtimeClassName: {{ . | quote }}
{{- end }}
{{- end }}

{{/*
How a Job treats its pods' failures (restartPolicy Never): an eviction, preemption or node drain
(DisruptionTarget) is retried without counting; exit code 2 (bad flags or input, refused
credentials) fails the Job at once, as a retry would fail the same way; any other failure counts
against backoffLimit, and the new pod resumes from what is committed. (dict "container" "agent").
*/}}
{{- define "udm-orch.podFailurePolicy" -}}
podFailurePolicy:
  rules:
    - action: Ignore
      onPodConditions:
        - type: DisruptionTarget
    - action: FailJob
      onExitCodes:
        containerName: {{ .container }}
        operator: In
        values: [2]
{{- end }}

{{/* The run's name both the coordinator and the scorer are given (--run-name): run.name, else the release name. */}}
{{- define "udm-orch.runName" -}}
{{- .Values.run.name | default .Release.Name -}}
{{- end }}
