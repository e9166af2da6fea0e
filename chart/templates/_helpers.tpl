{{- define "devtool.labels" -}}
app.kubernetes.io/name: devtool
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}

{{- define "devtool.frontDoorHost" -}}
{{- .Values.frontDoor.host | default (printf "devtool.%s" .Values.endpointDomain) -}}
{{- end }}

{{- /* The hosts the front door lets a namespace claim besides its endpoints (JSON, by namespace):
ingress.allowedHosts, and the front door's own host for the release namespace. */}}
{{- define "devtool.allowedHosts" -}}
{{- $allowed := deepCopy .Values.ingress.allowedHosts -}}
{{- $own := get $allowed .Release.Namespace | default list -}}
{{- $_ := set $allowed .Release.Namespace (append $own (include "devtool.frontDoorHost" .)) -}}
{{- toJson $allowed -}}
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

{{- /* hosted builds */}}
{{- define "devtool.builderName" -}}
{{ .Release.Name }}-builder
{{- end }}

{{- define "devtool.builderHost" -}}
{{ include "devtool.builderName" . }}.{{ .Release.Namespace }}.svc
{{- end }}

{{- define "devtool.builderSelector" -}}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: builder
{{- end }}

{{- /* The builder's TLS material (CA, daemon and client certificates), base64 by key: the installed
Secret's, else new ones. Kept across upgrades so that neither side restarts for nothing. */}}
{{- define "devtool.builderTls" -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (printf "%s-tls" (include "devtool.builderName" .)) -}}
{{- if and $existing (index ($existing.data | default dict) "client.key") -}}
{{- toJson $existing.data -}}
{{- else -}}
{{- $name := include "devtool.builderName" . -}}
{{- $ca := genCA "devtool builder CA" 3650 -}}
{{- $sans := list $name (printf "%s.%s" $name .Release.Namespace) (include "devtool.builderHost" .) (printf "%s.cluster.local" (include "devtool.builderHost" .)) -}}
{{- $daemon := genSignedCert (include "devtool.builderHost" .) nil $sans 3650 $ca -}}
{{- $client := genSignedCert "devtool service" nil nil 3650 $ca -}}
{{- toJson (dict "ca.crt" ($ca.Cert | b64enc) "tls.crt" ($daemon.Cert | b64enc) "tls.key" ($daemon.Key | b64enc) "client.crt" ($client.Cert | b64enc) "client.key" ($client.Key | b64enc)) -}}
{{- end -}}
{{- end }}

{{- /* Whether the release holds the front door's CA: with its own front door, or given in values
(a second release behind another release's front door: the service still hands the CA out and
pipeline runners trust it). */}}
{{- define "devtool.hasCa" -}}
{{- if or .Values.ingress.enabled .Values.ca.certificate -}}true{{- end -}}
{{- end }}

{{- /* A CEL list of the hosts an Ingress names (its rules' and its TLS entries') for which the CEL
condition given, over `h`, holds. */}}
{{- define "devtool.ingressHostsWhere" -}}
(has(object.spec.rules) ? object.spec.rules.filter(r, has(r.host) && [r.host].exists(h, {{ . }})).map(r, r.host) : []) + (has(object.spec.tls) ? object.spec.tls.filter(t, has(t.hosts)).map(t, t.hosts.filter(h, {{ . }})).filter(l, size(l) > 0).map(l, l[0]) : [])
{{- end }}

{{- /* The front door's key for the service's waking page (templates/front-door-key.yaml). */}}
{{- define "devtool.frontDoorKeySecret" -}}
{{ .Release.Name }}-front-door-key
{{- end }}

{{- /* Whether the front door sends sleeping namespaces' requests to the service's waking page. */}}
{{- define "devtool.wakingPage" -}}
{{- if and .Values.ingress.enabled .Values.service.enabled -}}true{{- end -}}
{{- end }}
