#!/usr/bin/env bash
# pin-version.sh VERSION writes scripts/components/VERSION/go.mod and go.sum:
# the module set `make components KUBE_VERSION=VERSION` builds that version's
# kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kubelet
# and (up to 1.37) hollow-kubelet and fake-cri from.
#
# The file is read with -modfile from scripts/components, so the module is
# still this folder's (its cmd/ sources build against VERSION's APIs), but
# its requirements are k8s.io/kubernetes VERSION's alone: every staging
# module that VERSION's own go.mod replaces with ./staging/src/k8s.io/X is
# replaced with k8s.io/X v0.MINOR.PATCH, and the go command adds what the
# built packages import, at the versions k8s.io/kubernetes VERSION requires.
# kwok and etcd are not in it: they are shared by every version and built
# from the default module set (../go.mod).
#
# It loads the packages (go list -deps), which downloads their modules; it
# compiles nothing. Run it again to pin a new patch release; the default
# version (v1.36.3) is pinned by go.mod itself and is not written here.
set -euo pipefail

version=${1:?usage: pin-version.sh vMAJOR.MINOR.PATCH (for example v1.37.2)}
if [[ ! $version =~ ^v1\.([0-9]+)\.([0-9]+)$ ]]; then
	echo "pin-version.sh: $version is not a Kubernetes version such as v1.37.2" >&2
	exit 2
fi
minor=${BASH_REMATCH[1]} patch=${BASH_REMATCH[2]}
staging=v0.$minor.$patch
go=${GO:-go}
cd "$(dirname "$0")"

# The packages make components builds for this version. kubemark, and
# with it the hollow kubelet, is removed in v1.38.0-alpha.2.
targets=(k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
	k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl k8s.io/kubernetes/cmd/kubelet)
if ((minor <= 37)); then
	targets+=(./cmd/hollow-kubelet ./cmd/fake-cri)
fi

gomod=$($go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
[[ -f $gomod ]] || { echo "pin-version.sh: no go.mod for k8s.io/kubernetes@$version in the module cache" >&2; exit 1; }
modules=$(sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/src/k8s\.io/[a-z0-9-]*$#\1#p' "$gomod" | sort -u)
[[ -n $modules ]] || { echo "pin-version.sh: $gomod replaces no staging module" >&2; exit 1; }

mkdir -p "$version"
{
	echo "// The module set of Kubernetes $version, written by pin-version.sh; \`make"
	echo "// components KUBE_VERSION=$version\` builds with -modfile=$version/go.mod from"
	echo "// scripts/components. kwok and etcd come from the default set (../go.mod)."
	echo "module github.com/stormbench/stormbench/scripts/components"
	echo
	echo "go 1.26.0"
	echo
	echo "require k8s.io/kubernetes $version"
	echo
	echo "replace ("
	for m in $modules; do
		printf '\t%s => %s %s\n' "$m" "$m" "$staging"
	done
	echo ")"
} >"$version/go.mod"
rm -f "$version/go.sum"
touch "$version/go.sum"

tags=k8s_1_$minor
echo "==> $version: resolving ${#targets[@]} packages' imports (downloads modules, compiles nothing)"
GOFLAGS=-mod=mod $go list -modfile="$version/go.mod" -tags "$tags" -deps "${targets[@]}" >/dev/null
# What make components will find: every import resolved from the pinned
# set, no go.mod or go.sum change needed.
GOFLAGS=-mod=readonly $go list -modfile="$version/go.mod" -tags "$tags" -deps "${targets[@]}" >/dev/null
$go mod edit -fmt "$version/go.mod"
echo "==> $version/go.mod: k8s.io/kubernetes $version, $(grep -c "=> k8s.io/" "$version/go.mod") staging modules at $staging, $(wc -l <"$version/go.sum") go.sum lines"
