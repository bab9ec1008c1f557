{{/* The chart's name: the app.kubernetes.io/name label of the controller's objects. */}}
{{- define "cronledger.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The base name of every object: the release name when it contains the chart's name. */}}
{{- define "cronledger.fullname" -}}
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

{{/* The mode, checked: one of the four the kustomize overlays offer. */}}
{{- define "cronledger.mode" -}}
{{- $modes := list "controller" "controller-batch" "shadow" "kafka" }}
{{- if not (has .Values.mode $modes) }}
{{- fail (printf "mode must be one of %s, not %q" (join ", " $modes) .Values.mode) }}
{{- end }}
{{- .Values.mode }}
{{- end }}

{{/* The resource the mode manages or audits (--resource). */}}
{{- define "cronledger.resource" -}}
{{- if has .Values.mode (list "controller" "kafka") }}cronjobs.v1.cronledger.io{{ else }}cronjobs.v1.batch{{ end }}
{{- end }}

{{- define "cronledger.replicas" -}}
{{- if eq .Values.mode "shadow" }}
{{- if and .Values.replicas (ne (int .Values.replicas) 1) }}
{{- fail "shadow mode runs one replica (it never acts, so there is nothing to elect)" }}
{{- end }}1
{{- else if .Values.replicas }}{{ int .Values.replicas }}
{{- else if eq .Values.mode "kafka" }}3
{{- else }}1
{{- end }}
{{- end }}

{{- define "cronledger.leaseName" -}}
{{- default (printf "%s-controller" (include "cronledger.fullname" .)) .Values.leaderElection.leaseName }}
{{- end }}

{{- define "cronledger.apiTokenSecret" -}}
{{- default (printf "%s-api-token" (include "cronledger.fullname" .)) .Values.api.tokenSecret }}
{{- end }}

{{/* Labels of every object of the controller (name: the chart's, or "<name>-relay"). */}}
{{- define "cronledger.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{ include "cronledger.selectorLabels" . }}
{{- end }}

{{- define "cronledger.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cronledger.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "cronledger.relayLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{ include "cronledger.relaySelectorLabels" . }}
{{- end }}

{{- define "cronledger.relaySelectorLabels" -}}
app.kubernetes.io/name: {{ include "cronledger.name" . }}-relay
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "cronledger.image" -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end }}

{{/* The restricted Pod Security settings of every container. */}}
{{- define "cronledger.containerSecurityContext" -}}
runAsNonRoot: true
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
{{- end }}

{{- define "cronledger.auditStoreLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{ include "cronledger.auditStoreSelectorLabels" . }}
{{- end }}

{{- define "cronledger.auditStoreSelectorLabels" -}}
app.kubernetes.io/name: {{ include "cronledger.name" . }}-audit-store
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}
