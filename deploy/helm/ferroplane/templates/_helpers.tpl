{{/* The release's full name: the release name when it already contains the chart's name. */}}
{{- define "ferroplane.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "ferroplane.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "ferroplane.labels" -}}
{{ include "ferroplane.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "ferroplane.serviceAccountName" -}}
{{- default (include "ferroplane.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/* Leader election is on when asked for, and always with more than one replica. */}}
{{- define "ferroplane.leaderElection" -}}
{{- if or .Values.leaderElection.enabled (gt (int .Values.replicas) 1) -}}true{{- end -}}
{{- end -}}

{{/* The provider of each kind (the binary's `Kind::provider`); an unknown kind fails the render. */}}
{{- define "ferroplane.providers" -}}
{{- $providers := list -}}
{{- range .Values.kinds -}}
{{- if eq . "ecsinstance" -}}{{- $providers = append $providers "alibaba" -}}
{{- else if eq . "etcdcluster" -}}{{- $providers = append $providers "etcd" -}}
{{- else if eq . "application" -}}{{- $providers = append $providers "application" -}}
{{- else -}}{{- fail (printf "kinds: unknown kind %q (ecsinstance, etcdcluster, application)" .) -}}
{{- end -}}
{{- end -}}
{{- if not $providers -}}{{- fail "kinds: at least one kind" -}}{{- end -}}
{{- $providers | uniq | toJson -}}
{{- end -}}

{{/* The subject of every binding: the controller's ServiceAccount. */}}
{{- define "ferroplane.subjects" -}}
subjects:
  - kind: ServiceAccount
    name: {{ include "ferroplane.serviceAccountName" . }}
    namespace: {{ .Release.Namespace }}
{{- end -}}
