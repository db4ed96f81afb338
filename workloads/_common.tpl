{{- define "labels" -}}
stormbench.io/run: "{{ .RunID }}"
stormbench.io/workload: "{{ .Template }}"
{{- end }}
{{- define "scheduling" -}}
tolerations:
- key: kwok.x-k8s.io/node
  operator: Equal
  value: fake
  effect: NoSchedule
- key: node.kubernetes.io/not-ready
  operator: Exists
  effect: NoExecute
  tolerationSeconds: {{ .TolerationSeconds }}
- key: node.kubernetes.io/unreachable
  operator: Exists
  effect: NoExecute
  tolerationSeconds: {{ .TolerationSeconds }}
nodeSelector:
  type: kwok
  stormbench.io/run: "{{ .RunID }}"
{{- end }}
