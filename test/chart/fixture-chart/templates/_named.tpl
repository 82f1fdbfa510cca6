{{- define "fixture.who" -}}{{ .Release.Name }}@{{ .Release.Namespace }}{{- end -}}
