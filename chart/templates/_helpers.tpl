{{- define "devtool.labels" -}}
app.kubernetes.io/name: devtool
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}

{{- define "devtool.frontDoorHost" -}}
{{- .Values.frontDoor.host | default (printf "devtool.%s" .Values.endpointDomain) -}}
{{- end }}

{{- define "devtool.caSecret" -}}
{{ .Release.Name }}-front-door-ca
{{- end }}

{{- /* The CA certificate the release will hold, base64: given in values, else the installed one
(empty on a first install without one: the chart generates it then). */}}
{{- define "devtool.caCertB64" -}}
{{- if .Values.ca.certificate -}}
{{- .Values.ca.certificate | b64enc -}}
{{- else -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "devtool.caSecret" .) -}}
{{- dig "data" "tls.crt" "" ($existing | default dict) -}}
{{- end -}}
{{- end }}

{{- define "devtool.serviceName" -}}
{{ .Release.Name }}-service
{{- end }}

{{- define "devtool.serviceSelector" -}}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: service
{{- end }}

{{- /* Whether the release holds the front door's CA: with its own front door, or given in values
(a second release behind another release's front door: the service still hands the CA out and
pipeline runners trust it). */}}
{{- define "devtool.hasCa" -}}
{{- if or .Values.ingress.enabled .Values.ca.certificate -}}true{{- end -}}
{{- end }}
