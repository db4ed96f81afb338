package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Check is one preflight finding.
type Check struct {
	// Name says what was checked.
	Name string `json:"name"`
	// Status is ok, warn or fail.
	Status string `json:"status"`
	// Detail explains a warning or failure.
	Detail string `json:"detail,omitempty"`
}

// Preflight check statuses.
const (
	CheckOK   = "ok"
	CheckWarn = "warn"
	CheckFail = "fail"
)

// permission is one access a run needs.
type permission struct {
	verb, group, resource, subresource, name string
}

// runPermissions are what a run needs: the fleet's objects, relabelling,
// cordon and drain, and impersonating nodes for the kubelet replay.
var runPermissions = []permission{
	{"create", "", "nodes", "", ""}, {"delete", "", "nodes", "", ""}, {"patch", "", "nodes", "", ""}, {"list", "", "nodes", "", ""}, {"update", "", "nodes", "", ""},
	{"patch", "", "nodes", "status", ""},
	{"create", "storage.k8s.io", "csinodes", "", ""},
	{"create", "", "namespaces", "", ""}, {"delete", "", "namespaces", "", ""},
	{"list", "", "pods", "", ""}, {"create", "", "pods", "", ""}, {"delete", "", "pods", "", ""},
	{"create", "", "pods", "eviction", ""},
	{"create", "", "services", "", ""}, {"create", "", "configmaps", "", ""}, {"create", "", "secrets", "", ""}, {"create", "", "serviceaccounts", "", ""},
	{"create", "apps", "deployments", "", ""}, {"create", "apps", "statefulsets", "", ""}, {"create", "apps", "daemonsets", "", ""},
	{"create", "policy", "poddisruptionbudgets", "", ""},
	{"list", "discovery.k8s.io", "endpointslices", "", ""}, {"watch", "discovery.k8s.io", "endpointslices", "", ""},
	// The recovery measurement's watch of node leases (healthy nodes'
	// renewals); SelfSubjectAccessReview without a namespace asks cluster-wide.
	{"list", "coordination.k8s.io", "leases", "", ""}, {"watch", "coordination.k8s.io", "leases", "", ""},
	{"impersonate", "", "users", "", "system:node:*"}, {"impersonate", "", "groups", "", "system:nodes"},
}

// Preflight runs read-only checks against the target: the permissions a
// run needs (all reported at once), that a KWOK controller manages nodes by
// the label selector stormbench uses, and that heartbeat timing matches
// what the profile expects. A check that cannot ask the API server (ctx
// ended, the request timed out, the connection failed) is not a finding:
// Preflight returns an error saying so instead, never a permission reported
// missing because its question went unanswered.
func Preflight(ctx context.Context, t *Target, e *Embedded, wantGrace time.Duration, wantLease int) ([]Check, error) {
	var out []Check
	var missing []string
	for _, p := range runPermissions {
		ssar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: p.verb, Group: p.group, Resource: p.resource, Subresource: p.subresource, Name: p.name},
		}}
		r, err := t.Client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, ssar, metav1.CreateOptions{})
		what := strings.TrimPrefix(p.group+"/"+p.resource, "/")
		if p.subresource != "" {
			what += "/" + p.subresource
		}
		if p.name != "" {
			what += " " + p.name
		}
		if err != nil {
			if unanswered(ctx, err) {
				return out, fmt.Errorf("checking permission %s %s: %w", p.verb, what, err)
			}
			missing = append(missing, fmt.Sprintf("%s %s (%v)", p.verb, what, err))
		} else if !r.Status.Allowed {
			missing = append(missing, p.verb+" "+what)
		}
	}
	if len(missing) > 0 {
		out = append(out, Check{Name: "permissions", Status: CheckFail, Detail: "missing: " + strings.Join(missing, "; ")})
	} else {
		out = append(out, Check{Name: "permissions", Status: CheckOK, Detail: fmt.Sprintf("%d required permissions granted", len(runPermissions))})
	}
	selector := "manage-nodes-with-label-selector=" + KubeletLabel + "=" + KubeletUp
	if e != nil {
		out = append(out, embeddedChecks(e, selector, wantGrace, wantLease)...)
		return out, nil
	}
	pods, err := t.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil && unanswered(ctx, err) {
		return out, fmt.Errorf("looking for the KWOK controller: %w", err)
	}
	found, other := false, ""
	if err == nil {
		for _, p := range pods.Items {
			for _, c := range p.Spec.Containers {
				args := strings.Join(append(append([]string{}, c.Command...), c.Args...), " ")
				if !strings.Contains(c.Image, "kwok") && !strings.Contains(args, "kwok") {
					continue
				}
				if strings.Contains(args, selector) {
					found = true
				} else {
					other = p.Namespace + "/" + p.Name
				}
			}
		}
	}
	switch {
	case err != nil:
		out = append(out, Check{Name: "kwok controller", Status: CheckWarn, Detail: fmt.Sprintf("cannot list pods to find it: %v", err)})
	case found:
		out = append(out, Check{Name: "kwok controller", Status: CheckOK, Detail: "manages nodes with " + KubeletLabel + "=" + KubeletUp})
	case other != "":
		out = append(out, Check{Name: "kwok controller", Status: CheckFail, Detail: fmt.Sprintf("%s does not run with --%s", other, selector)})
	default:
		out = append(out, Check{Name: "kwok controller", Status: CheckFail, Detail: "no KWOK controller pod found; deploy one with --manage-all-nodes=false --" + selector})
	}
	out = append(out, Check{Name: "heartbeat timing", Status: CheckWarn, Detail: fmt.Sprintf("cannot read the controller manager's flags on an existing cluster; the profile expects --node-monitor-grace-period=%s and %ds leases", wantGrace, wantLease)})
	return out, nil
}

// unanswered reports whether err says the API server gave no answer (ctx
// ended, the request timed out or never reached it) rather than an answer
// that is an error (forbidden, say). The server's own timeout is no answer
// either.
func unanswered(ctx context.Context, err error) bool {
	if ctx.Err() != nil || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) {
		return true
	}
	var status apierrors.APIStatus
	return !errors.As(err, &status)
}

func embeddedChecks(e *Embedded, selector string, wantGrace time.Duration, wantLease int) []Check {
	var out []Check
	pid := e.PIDs()["kwok-controller"]
	var args []string
	proc, err := procfs.NewProc(pid)
	if err == nil {
		args, err = proc.CmdLine()
	}
	switch {
	case err != nil || pid == 0:
		out = append(out, Check{Name: "kwok controller", Status: CheckFail, Detail: "the embedded kwok-controller is not running"})
	case strings.Contains(strings.Join(args, " "), "--"+selector):
		out = append(out, Check{Name: "kwok controller", Status: CheckOK, Detail: "manages nodes with " + KubeletLabel + "=" + KubeletUp})
	default:
		out = append(out, Check{Name: "kwok controller", Status: CheckFail, Detail: "the embedded kwok-controller does not run with --" + selector})
	}
	conf, err := e.Configuration()
	if err != nil {
		return append(out, Check{Name: "heartbeat timing", Status: CheckWarn, Detail: err.Error()})
	}
	grace := time.Duration(conf.Options.KubeControllerManagerNodeMonitorGracePeriodMilliseconds) * time.Millisecond
	lease := int(conf.Options.NodeLeaseDurationSeconds)
	if grace != wantGrace || lease != wantLease {
		out = append(out, Check{Name: "heartbeat timing", Status: CheckWarn, Detail: fmt.Sprintf("cluster has grace period %s and %ds leases; the profile expects %s and %ds", grace, lease, wantGrace, wantLease)})
	} else {
		out = append(out, Check{Name: "heartbeat timing", Status: CheckOK, Detail: fmt.Sprintf("grace period %s, %ds leases", grace, lease)})
	}
	return out
}
