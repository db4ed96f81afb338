#!/bin/sh
# impersonate-nodes.sh RUN_ID NODES prints a ClusterRole and binding that let
# the stormbench ServiceAccount impersonate the users of exactly the nodes of
# fleet RUN_ID (system:node:RUN_ID-node-00000 ... NODES-1), named as in
# bench/fleet/node.go NodeName. RBAC resourceNames match exactly, so
# "system:node:*" cannot be written; the alternative, impersonating any user,
# would let the ServiceAccount act as any user bound by name.
#
#   sh impersonate-nodes.sh big-storm 5000 | kubectl apply -f -
#
# 5,000 names make a ClusterRole of about 200 KB, well under the object limit.
set -eu
if [ $# -ne 2 ]; then
	echo "usage: $0 RUN_ID NODES" >&2
	exit 2
fi
run=$1
nodes=$2
case $nodes in
'' | *[!0-9]*)
	echo "$0: NODES must be a number, got '$nodes'" >&2
	exit 2
	;;
esac
cat <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: stormbench-impersonate-$run
  labels:
    app.kubernetes.io/part-of: stormbench
rules:
- apiGroups: [""]
  resources: [users]
  verbs: [impersonate]
  resourceNames:
EOF
i=0
while [ "$i" -lt "$nodes" ]; do
	printf '  - "system:node:%s-node-%05d"\n' "$run" "$i"
	i=$((i + 1))
done
cat <<EOF
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: stormbench-impersonate-$run
  labels:
    app.kubernetes.io/part-of: stormbench
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: stormbench-impersonate-$run
subjects:
- kind: ServiceAccount
  name: stormbench
  namespace: stormbench
EOF
