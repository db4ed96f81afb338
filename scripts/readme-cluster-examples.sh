#!/usr/bin/env bash
# Runs the README's cluster examples that `make run` does not: a long-lived
# embedded cluster, its status, a fleet up and down, preflight and cleanup
# --list, then the cluster down. The fleet is smaller than the README's
# (--nodes 1000 --pods-per-node 10) so that CI stays short; the flags are the
# README's. Called by .ci/run after `make run`; needs bin/ (make components).
set -euo pipefail
cd "$(dirname "$0")/.."

SB=${SB:-bin/stormbench}
NAME=readme-examples
WORKDIR=$(mktemp -d)
down() {
	"$SB" cluster down --name "$NAME" --workdir "$WORKDIR" || true
	rm -rf "$WORKDIR"
}
trap down EXIT

step() { echo "==> stormbench $*"; "$SB" "$@"; }
c=(--name "$NAME" --workdir "$WORKDIR")

# cluster up returns once every component serves what status checks (it
# waits up to --wait, 2m), so status passes right away.
step cluster up "${c[@]}"
step cluster status "${c[@]}"
step cluster status "${c[@]}" -o json >/dev/null
step fleet up "${c[@]}" --run-id f1 --profile quick --nodes 20 --pods-per-node 2
step preflight "${c[@]}"
step cleanup "${c[@]}" --list
step fleet down "${c[@]}" --run-id f1
step cluster down "${c[@]}"
