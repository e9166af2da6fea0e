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
