// Package kubeversion names the Kubernetes releases stormbench runs: the
// supported versions, how a version a user writes resolves to one of them,
// and what differs between them as data (the defaults of the feature gates
// the kubelet model knows), so that a model branches on a table rather than
// on version numbers.
//
// A version is an input of a run: the embedded control plane runs its
// kube-apiserver, controller manager and scheduler (`make components
// KUBE_VERSION=v1.37.2` builds them into bin/v1.37.2/), the real kubelets
// are its kubelet, and the simulated kubelets take its gate defaults.
package kubeversion

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Version is a Kubernetes release 1.MINOR.PATCH, as k8s.io/kubernetes tags
// it (v1.37.2). The zero Version is "not set"; Or gives the default then.
type Version struct {
	// Minor is the minor release: 37 for v1.37.2.
	Minor int
	// Patch is the patch release: 2 for v1.37.2.
	Patch int
}

// The supported versions: the releases of k8s.io/kubernetes whose
// components `make components KUBE_VERSION=...` builds, each from its own
// pinned module set (scripts/components).
var (
	V1_34 = Version{Minor: 34, Patch: 4}
	V1_35 = Version{Minor: 35, Patch: 4}
	V1_36 = Version{Minor: 36, Patch: 3}
	V1_37 = Version{Minor: 37, Patch: 2}
)

// Default is the version of a run that names none: the one `make
// components` builds into bin/ itself.
var Default = V1_36

// Supported lists the versions stormbench runs, oldest first.
func Supported() []Version { return []Version{V1_34, V1_35, V1_36, V1_37} }

// String is the version as k8s.io/kubernetes tags it and its API server
// reports it: "v1.37.2"; "" for the zero Version.
func (v Version) String() string {
	if v.IsZero() {
		return ""
	}
	return fmt.Sprintf("v1.%d.%d", v.Minor, v.Patch)
}

// Short is the version without the v: "1.37.2".
func (v Version) Short() string { return strings.TrimPrefix(v.String(), "v") }

// MinorRelease is the minor release: "1.37".
func (v Version) MinorRelease() string { return fmt.Sprintf("1.%d", v.Minor) }

// IsZero reports whether v is not set.
func (v Version) IsZero() bool { return v == Version{} }

// Or is v, or def when v is not set.
func (v Version) Or(def Version) Version {
	if v.IsZero() {
		return def
	}
	return v
}

// IsDefault reports whether v is Default (the zero Version counts as it).
func (v Version) IsDefault() bool { return v.Or(Default) == Default }

// Before reports whether v is an older release than w.
func (v Version) Before(w Version) bool {
	return v.Minor < w.Minor || v.Minor == w.Minor && v.Patch < w.Patch
}

// MakeTarget is the command that builds v's components.
func (v Version) MakeTarget() string {
	if v.IsDefault() {
		return "make components"
	}
	return "make components KUBE_VERSION=" + v.String()
}

// versionText is what Parse accepts: 1.MINOR or 1.MINOR.PATCH, with or
// without a leading v.
var versionText = regexp.MustCompile(`^v?1\.(0|[1-9][0-9]{0,2})(?:\.(0|[1-9][0-9]{0,3}))?$`)

// reportedMinor finds the minor release in an API server's gitVersion
// (v1.37.2, v1.37.2-gke.1100, v1.37.0-rc.1).
var reportedMinor = regexp.MustCompile(`^v?1\.([0-9]+)\.`)

// UnsupportedError is a version stormbench does not run, or text that is no
// version at all. Its message lists the supported versions.
type UnsupportedError struct {
	// Input is the text given.
	Input string
	// reason says what is wrong with it.
	reason string
}

func (e *UnsupportedError) Error() string { return e.reason }

// SupportedList lists the supported versions for a message: "1.34.4,
// 1.35.4, 1.36.3 (the default) and 1.37.2".
func SupportedList() string {
	var names []string
	for _, v := range Supported() {
		s := v.Short()
		if v == Default {
			s += " (the default)"
		}
		names = append(names, s)
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// Parse resolves a version a user wrote to a supported one: "1.37.2" and
// "v1.37.2" name it, and "1.37" names the minor release's supported patch
// release. Anything else is an *UnsupportedError listing the supported
// versions.
func Parse(s string) (Version, error) {
	in := strings.TrimSpace(s)
	m := versionText.FindStringSubmatch(in)
	if m == nil {
		shown := in
		if len(shown) > 40 {
			shown = shown[:40] + "..."
		}
		return Version{}, &UnsupportedError{Input: s, reason: fmt.Sprintf("%q is not a Kubernetes version: give one such as 1.37.2, v1.37.2 or 1.37 (stormbench runs %s)", shown, SupportedList())}
	}
	minor, _ := strconv.Atoi(m[1])
	var found Version
	for _, v := range Supported() {
		if v.Minor == minor {
			found = v
		}
	}
	if found.IsZero() {
		return Version{}, &UnsupportedError{Input: s, reason: fmt.Sprintf("Kubernetes 1.%d is not supported: stormbench runs %s", minor, SupportedList())}
	}
	if m[2] == "" {
		return found, nil
	}
	if patch, _ := strconv.Atoi(m[2]); patch != found.Patch {
		return Version{}, &UnsupportedError{Input: s, reason: fmt.Sprintf("Kubernetes 1.%d.%d is not supported: its minor release is %s here (give %s or %s; stormbench runs %s)", minor, patch, found.Short(), found.Short(), found.MinorRelease(), SupportedList())}
	}
	return found, nil
}

// CheckServer checks the version an API server reports (/version's
// gitVersion, such as "v1.37.2") against v. exact asks for v itself, as a
// control plane built from v's sources reports it; otherwise the cluster's
// minor release must be v's (a cluster of its own runs whatever patch
// release its provider chose).
func (v Version) CheckServer(reported string, exact bool) error {
	if exact {
		if reported != v.String() {
			return fmt.Errorf("the API server reports Kubernetes %q, not the %s asked for: its binaries are of another version (rebuild them with `%s`)", reported, v, v.MakeTarget())
		}
		return nil
	}
	m := reportedMinor.FindStringSubmatch(reported)
	if m == nil || m[1] != strconv.Itoa(v.Minor) {
		return fmt.Errorf("the cluster runs Kubernetes %q, not %s as asked: run against a %s cluster, or ask for its version", reported, v.MinorRelease(), v.MinorRelease())
	}
	return nil
}
