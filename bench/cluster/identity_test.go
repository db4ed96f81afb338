package cluster

import (
	"slices"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// apfRequest is what APF classifies a request by.
type apfRequest struct {
	user                         string
	groups                       []string
	verb, apiGroup, resource, ns string
	nonResourceURL               string
}

// suggestedFlowSchemas are the suggested and mandatory FlowSchemas of
// k8s.io/apiserver v0.36.3 (pkg/apis/flowcontrol/bootstrap/default.go),
// copied here with the fields classification reads, so that the test
// does not take the API server as a dependency.
func suggestedFlowSchemas() []*flowcontrolv1.FlowSchema {
	all := []string{"*"}
	everything := func(subjects ...flowcontrolv1.Subject) flowcontrolv1.PolicyRulesWithSubjects {
		return flowcontrolv1.PolicyRulesWithSubjects{Subjects: subjects,
			ResourceRules:    []flowcontrolv1.ResourcePolicyRule{{Verbs: all, APIGroups: all, Resources: all, Namespaces: all, ClusterScope: true}},
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: all, NonResourceURLs: all}}}
	}
	group := func(n string) flowcontrolv1.Subject {
		return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: n}}
	}
	user := func(n string) flowcontrolv1.Subject {
		return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: n}}
	}
	kubeSystemSAs := flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindServiceAccount, ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: "kube-system", Name: "*"}}
	fs := func(name, pl string, prec int32, rules ...flowcontrolv1.PolicyRulesWithSubjects) *flowcontrolv1.FlowSchema {
		return &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: pl}, MatchingPrecedence: prec, Rules: rules}}
	}
	return []*flowcontrolv1.FlowSchema{
		fs("exempt", "exempt", 1, everything(group("system:masters"))),
		fs("probes", "exempt", 2, flowcontrolv1.PolicyRulesWithSubjects{Subjects: []flowcontrolv1.Subject{group("system:unauthenticated"), group("system:authenticated")},
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/readyz", "/livez"}}}}),
		fs("system-leader-election", "leader-election", 100, flowcontrolv1.PolicyRulesWithSubjects{
			Subjects:      []flowcontrolv1.Subject{user("system:kube-controller-manager"), user("system:kube-scheduler"), kubeSystemSAs},
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"get", "create", "update"}, APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Namespaces: all}}}),
		fs("system-node-high", "node-high", 400, flowcontrolv1.PolicyRulesWithSubjects{Subjects: []flowcontrolv1.Subject{group("system:nodes")},
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{
				{Verbs: all, APIGroups: []string{""}, Resources: []string{"nodes", "nodes/status"}, Namespaces: all, ClusterScope: true},
				{Verbs: all, APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Namespaces: all}}}),
		fs("system-nodes", "system", 500, everything(group("system:nodes"))),
		fs("kube-controller-manager", "workload-high", 800, everything(user("system:kube-controller-manager"))),
		fs("kube-scheduler", "workload-high", 800, everything(user("system:kube-scheduler"))),
		fs("kube-system-service-accounts", "workload-high", 900, everything(kubeSystemSAs)),
		fs("service-accounts", "workload-low", 9000, everything(group("system:serviceaccounts"))),
		fs("global-default", "global-default", 9900, everything(group("system:unauthenticated"), group("system:authenticated"))),
		fs("catch-all", "catch-all", 10000, everything(group("system:unauthenticated"), group("system:authenticated"))),
	}
}

// classify returns the FlowSchema APF gives r: the matching one of lowest
// precedence, ties broken by name (apiserver's FlowSchemaSequence).
func classify(schemas []*flowcontrolv1.FlowSchema, r apfRequest) *flowcontrolv1.FlowSchema {
	sorted := slices.Clone(schemas)
	slices.SortStableFunc(sorted, func(a, b *flowcontrolv1.FlowSchema) int {
		if a.Spec.MatchingPrecedence != b.Spec.MatchingPrecedence {
			return int(a.Spec.MatchingPrecedence - b.Spec.MatchingPrecedence)
		}
		return strings.Compare(a.Name, b.Name)
	})
	in := func(list []string, x string) bool { return slices.Contains(list, "*") || slices.Contains(list, x) }
	for _, fs := range sorted {
		for _, rule := range fs.Spec.Rules {
			if !slices.ContainsFunc(rule.Subjects, func(s flowcontrolv1.Subject) bool {
				switch s.Kind {
				case flowcontrolv1.SubjectKindUser:
					return s.User.Name == "*" || s.User.Name == r.user
				case flowcontrolv1.SubjectKindGroup:
					return s.Group.Name == "*" || slices.Contains(r.groups, s.Group.Name)
				case flowcontrolv1.SubjectKindServiceAccount:
					prefix := "system:serviceaccount:" + s.ServiceAccount.Namespace + ":"
					return strings.HasPrefix(r.user, prefix) && (s.ServiceAccount.Name == "*" || r.user == prefix+s.ServiceAccount.Name)
				}
				return false
			}) {
				continue
			}
			if r.nonResourceURL != "" {
				for _, nr := range rule.NonResourceRules {
					if in(nr.Verbs, r.verb) && in(nr.NonResourceURLs, r.nonResourceURL) {
						return fs
					}
				}
				continue
			}
			for _, rr := range rule.ResourceRules {
				scoped := (r.ns == "" && rr.ClusterScope) || (r.ns != "" && in(rr.Namespaces, r.ns))
				if in(rr.Verbs, r.verb) && in(rr.APIGroups, r.apiGroup) && in(rr.Resources, r.resource) && scoped {
					return fs
				}
			}
		}
	}
	return nil
}

// TestFlowSchemasKeepPriorityLevels: every request lands in the priority
// level it had without stormbench's flow schemas (only the suggested and
// KWOK's, which place KWOK deliberately), and in the flow of its sender.
func TestFlowSchemasKeepPriorityLevels(t *testing.T) {
	sa := func(name string) (string, []string) {
		return "system:serviceaccount:kube-system:" + name, []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}
	}
	node := []string{"system:nodes", "system:authenticated"}
	authn := []string{"system:authenticated"}
	req := func(user string, groups []string, verb, group, resource, ns string) apfRequest {
		return apfRequest{user: user, groups: groups, verb: verb, apiGroup: group, resource: resource, ns: ns}
	}
	slicesUser, slicesGroups := sa("endpointslice-controller")
	nodeCtlUser, nodeCtlGroups := sa("node-controller")
	unknownUser, unknownGroups := sa("some-new-controller")
	tests := []struct {
		r    apfRequest
		flow string
	}{
		{req("system:node:n1", node, "update", "coordination.k8s.io", "leases", "kube-node-lease"), FlowKubelet},
		{req("system:node:n1", node, "patch", "", "pods/status", "ns"), FlowKubelet},
		{req("system:node:n1", node, "patch", "", "nodes/status", ""), FlowKubelet},
		{req(slicesUser, slicesGroups, "update", "discovery.k8s.io", "endpointslices", "ns"), "endpointslice-controller"},
		{req(slicesUser, slicesGroups, "get", "coordination.k8s.io", "leases", "kube-system"), FlowOther}, // system-leader-election, as before
		{req(nodeCtlUser, nodeCtlGroups, "patch", "", "nodes", ""), "node-controller"},
		{req(unknownUser, unknownGroups, "list", "", "pods", ""), FlowControllers},
		{req(UserControllerManager, authn, "update", "coordination.k8s.io", "leases", "kube-system"), FlowControllerManager},
		{req(UserControllerManager, authn, "list", "", "configmaps", "kube-system"), FlowControllerManager},
		{req(UserScheduler, authn, "update", "coordination.k8s.io", "leases", "kube-system"), FlowScheduler},
		{req(UserScheduler, authn, "create", "", "pods/binding", "ns"), FlowScheduler},
		{req(UserKwok, []string{GroupKwok, "system:authenticated"}, "update", "coordination.k8s.io", "leases", "kube-node-lease"), FlowKwok},
		{req(UserKwok, []string{GroupKwok, "system:authenticated"}, "patch", "", "pods/status", "ns"), FlowKwok},
		{req(UserHarness, []string{GroupHarness, "system:authenticated"}, "patch", "", "nodes", ""), FlowHarness},
		{req(UserHarness, []string{GroupHarness, "system:authenticated"}, "create", "", "pods", "ns"), FlowHarness},
		{apfRequest{user: UserHarness, groups: []string{GroupHarness, "system:authenticated"}, verb: "get", nonResourceURL: "/metrics"}, FlowHarness},
		{apfRequest{user: UserControllerManager, groups: authn, verb: "get", nonResourceURL: "/api"}, FlowControllerManager},
		{apfRequest{user: slicesUser, groups: slicesGroups, verb: "get", nonResourceURL: "/apis"}, "endpointslice-controller"},
		{req("system:apiserver", []string{"system:masters", "system:authenticated"}, "update", "coordination.k8s.io", "leases", "kube-system"), FlowOther},
		{req("someone", authn, "get", "", "pods", "ns"), FlowOther},
	}
	ours := flowSchemas()
	var kwokAndObserver []*flowcontrolv1.FlowSchema
	for _, fs := range ours {
		if fs.Name == FlowSchemaKwok || fs.Name == FlowSchemaKwokHeartbeats || fs.Name == FlowSchemaObserver {
			kwokAndObserver = append(kwokAndObserver, fs)
		}
	}
	before := append(suggestedFlowSchemas(), kwokAndObserver...)
	after := append(suggestedFlowSchemas(), ours...)
	for _, tt := range tests {
		was, is := classify(before, tt.r), classify(after, tt.r)
		if was == nil || is == nil {
			t.Errorf("%+v: no flow schema matched", tt.r)
			continue
		}
		if was.Spec.PriorityLevelConfiguration.Name != is.Spec.PriorityLevelConfiguration.Name {
			t.Errorf("%+v: priority level %s, was %s (%s before, %s now)", tt.r, is.Spec.PriorityLevelConfiguration.Name,
				was.Spec.PriorityLevelConfiguration.Name, was.Name, is.Name)
		}
		if got := FlowOf(is.Name); got != tt.flow {
			t.Errorf("%+v: flow %q (flow schema %s), want %q", tt.r, got, is.Name, tt.flow)
		}
	}
	// Every flow FlowOf names is in Flows, and every schema name is one
	// Kubernetes accepts.
	for _, fs := range ours {
		if f := FlowOf(fs.Name); !slices.Contains(Flows(), f) {
			t.Errorf("flow schema %s: flow %q not in Flows()", fs.Name, f)
		}
		if len(fs.Name) > 253 {
			t.Errorf("flow schema name %s too long", fs.Name)
		}
	}
}
