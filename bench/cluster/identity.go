package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/stormbench/stormbench/bench/poll"
	"github.com/stormbench/stormbench/profiles"
)

// Component identities of the embedded cluster with realistic APF
// (controlPlane.apf: realistic). kubeadm gives kube-controller-manager and
// kube-scheduler client certificates for system:kube-controller-manager and
// system:kube-scheduler (no groups), and runs the controller manager with
// --use-service-account-credentials, so that each controller calls as
// system:serviceaccount:kube-system:<controller>. The API server's
// bootstrap RBAC and the suggested FlowSchemas (kube-controller-manager,
// kube-scheduler, kube-system-service-accounts, endpoint-controller, all
// workload-high) key on exactly these names. Here the identities are
// static bearer tokens (--token-auth-file) instead of certificates: APF and
// RBAC see the same user and groups either way, and kwokctl 0.8 has no way
// to hand a component a certificate of its own.
const (
	UserControllerManager = "system:kube-controller-manager"
	UserScheduler         = "system:kube-scheduler"
	// UserKwok is the KWOK controller: the simulated heartbeats (node leases
	// and node status) and pod status of every KWOK node.
	UserKwok  = "stormbench:kwok-controller"
	GroupKwok = "stormbench:kwok"
	// UserHarness is stormbench itself: fleet creation, relabels, the
	// simulated kubelets' requests (which it sends impersonating
	// system:node:<name>, so APF classifies them as the node's), and the
	// measurements.
	UserHarness  = "stormbench:harness"
	GroupHarness = "stormbench:harness"
)

// FlowSchemas stormbench adds with realistic APF. Precedence is below the
// suggested system-node-high (400) and system-nodes (500) schemas that
// real kubelets match, so that KWOK's heartbeats sit next to them.
const (
	// FlowSchemaKwokHeartbeats sends the KWOK controller's lease and node
	// status writes to node-high, where a kubelet's lease renewals and node
	// status go (system-node-high).
	FlowSchemaKwokHeartbeats = "stormbench-kwok-heartbeats"
	// FlowSchemaKwok sends the rest of the KWOK controller's requests (pod
	// status, pod and node reads) to system, where a kubelet's go
	// (system-nodes).
	FlowSchemaKwok = "stormbench-kwok"
	// FlowSchemaObserver exempts the harness's scrapes of /metrics: the
	// observer must neither be starved by the storm it measures nor take
	// seats from it. Everything else the harness sends lands in
	// global-default, as any workload's would.
	FlowSchemaObserver = "stormbench-observer"
	// FlowSchemaHarness holds the rest of the harness's own requests
	// (fleet creation, relabels, reads); not those it sends impersonating
	// a node, which are the node's.
	FlowSchemaHarness = "stormbench-harness"
	// flowSchemaPrefix starts the name of each schema that only tells a
	// flow apart: "stormbench-flow-<flow>", and for a component's leader
	// election "stormbench-flow-<flow>-leader-election".
	flowSchemaPrefix       = "stormbench-flow-"
	leaderElectionSuffix   = "-leader-election"
	priorityLeaderElection = "leader-election"
	priorityWorkloadHigh   = "workload-high"
	priorityGlobalDefault  = "global-default"
)

// Flows: who sent a request, as FlowOf names them from the flow schema
// that APF classified it by (apiserver_flowcontrol_dispatched_requests_total
// by flow_schema). Every controller of kube-controller-manager is a flow of
// its own, named by its service account (ControllerServiceAccounts).
const (
	// FlowKubelet is every kubelet, real or simulated: the suggested
	// system-node-high and system-nodes schemas (group system:nodes; the
	// simulated kubelets impersonate system:node:<name>).
	FlowKubelet = "kubelet"
	// FlowKwok is the KWOK controller (FlowSchemaKwokHeartbeats,
	// FlowSchemaKwok).
	FlowKwok = "kwok"
	// FlowHarness is stormbench's own requests: its scrapes
	// (FlowSchemaObserver) and the rest (FlowSchemaHarness).
	FlowHarness = "harness"
	// FlowControllerManager is kube-controller-manager's own user: its
	// leader election, and whatever it sends without a controller's
	// service account.
	FlowControllerManager = "kube-controller-manager"
	// FlowScheduler is kube-scheduler.
	FlowScheduler = "kube-scheduler"
	// FlowControllers is the controllers that no schema of their own
	// tells apart: a controller not in ControllerServiceAccounts, or every
	// controller on a cluster stormbench did not create
	// (kube-system-service-accounts).
	FlowControllers = "controllers"
	// FlowOther is everything else: the API server's own loopback
	// requests (exempt), probes, and anything global-default or
	// catch-all holds.
	FlowOther = "other"
)

// ControllerServiceAccounts are the service accounts of
// kube-controller-manager's controllers, the names its bootstrap RBAC
// gives them (k8s.io/kubernetes v1.36.3,
// plugin/pkg/auth/authorizer/rbac/bootstrappolicy/controller_policy.go).
// With --use-service-account-credentials each controller calls as
// system:serviceaccount:kube-system:<name>, and each is a flow of that name.
var ControllerServiceAccounts = []string{
	"attachdetach-controller", "certificate-controller", "clusterrole-aggregation-controller",
	"cronjob-controller", "daemon-set-controller", "deployment-controller",
	"device-taint-eviction-controller", "disruption-controller", "endpoint-controller",
	"endpointslice-controller", "endpointslicemirroring-controller", "ephemeral-volume-controller",
	"expand-controller", "generic-garbage-collector", "horizontal-pod-autoscaler", "job-controller",
	"kube-apiserver-serving-clustertrustbundle-publisher", "legacy-service-account-token-cleaner",
	"namespace-controller", "node-controller", "persistent-volume-binder", "pod-garbage-collector",
	"podcertificaterequestcleaner", "podgroup-protection-controller", "pv-protection-controller",
	"pvc-protection-controller", "replicaset-controller", "replication-controller",
	"resource-claim-controller", "resourcepoolstatusrequest-controller", "resourcequota-controller",
	"root-ca-cert-publisher", "route-controller", "selinux-warning-controller",
	"service-account-controller", "service-cidrs-controller", "service-controller",
	"statefulset-controller", "storage-version-garbage-collector",
	"storage-version-migrator-controller", "ttl-after-finished-controller", "ttl-controller",
	"validatingadmissionpolicy-status-controller", "volumeattributesclass-protection-controller",
}

// FlowOf names the flow of a request APF classified by the flow schema
// named: stormbench's schemas name theirs, the suggested schemas that hold
// one sender name it, and everything else is FlowOther.
func FlowOf(flowSchema string) string {
	if f, ok := schemaFlows[flowSchema]; ok {
		return f
	}
	if f, ok := strings.CutPrefix(flowSchema, flowSchemaPrefix); ok && f != "" {
		return strings.TrimSuffix(f, leaderElectionSuffix)
	}
	return FlowOther
}

// schemaFlows are the flows of stormbench's schemas and of the suggested
// schemas that hold one sender, by schema.
var schemaFlows = map[string]string{
	"system-nodes": FlowKubelet, "system-node-high": FlowKubelet,
	FlowSchemaKwokHeartbeats: FlowKwok, FlowSchemaKwok: FlowKwok,
	FlowSchemaObserver: FlowHarness, FlowSchemaHarness: FlowHarness,
	"kube-controller-manager": FlowControllerManager, "kube-scheduler": FlowScheduler,
	"kube-system-service-accounts": FlowControllers,
}

// Flows lists every flow name FlowOf can return, in a fixed order: the
// kubelets, the control plane's components and controllers, the
// simulation's own, and the rest.
func Flows() []string {
	out := []string{FlowKubelet, FlowControllerManager, FlowScheduler}
	out = append(out, ControllerServiceAccounts...)
	return append(out, FlowControllers, FlowKwok, FlowHarness, FlowOther)
}

// IsSimulationFlow reports whether a flow's requests are only the
// simulation's: KWOK's and the harness's. A storm on real nodes with a
// real cluster sends none of them.
func IsSimulationFlow(flow string) bool { return flow == FlowKwok || flow == FlowHarness }

// identity is one component's credentials.
type identity struct {
	component string // the name in kwokctl's componentsPatches
	user      string
	groups    []string
	token     string
}

// realisticAPF reports whether the components run under identities of
// their own; an unset ControlPlane.APF (as tests build it) is realistic.
func (e *Embedded) realisticAPF() bool {
	return e.opts.ControlPlane.APF != profiles.APFExempt
}

func (e *Embedded) tokenFilePath() string {
	return filepath.Join(e.opts.WorkDir, e.opts.Name+".tokens.csv")
}

// componentKubeconfigPath is the kubeconfig a component calls the API
// server with under realistic APF.
func (e *Embedded) componentKubeconfigPath(component string) string {
	return filepath.Join(e.opts.WorkDir, e.opts.Name+"."+component+".kubeconfig")
}

// ClientKubeconfig is the kubeconfig stormbench itself uses on this
// cluster: the harness identity under realistic APF, the admin one
// (system:masters) under exempt. Kubeconfig stays the admin's, for people.
// It goes by the files: a cluster created with realistic APF has the
// harness kubeconfig, whatever the profile of a later command says.
func (e *Embedded) ClientKubeconfig() string {
	if _, err := os.Stat(e.componentKubeconfigPath("harness")); err == nil {
		return e.componentKubeconfigPath("harness")
	}
	return e.Kubeconfig()
}

// APFMode reports how the running cluster was created: profiles.APFRealistic
// when its components have identities of their own, else APFExempt.
func (e *Embedded) APFMode() string {
	if e.ClientKubeconfig() == e.Kubeconfig() {
		return profiles.APFExempt
	}
	return profiles.APFRealistic
}

// identities returns the component identities, with fresh tokens.
func newIdentities() ([]identity, error) {
	ids := []identity{
		{component: "kube-controller-manager", user: UserControllerManager},
		{component: "kube-scheduler", user: UserScheduler},
		{component: "kwok-controller", user: UserKwok, groups: []string{GroupKwok}},
		{component: "harness", user: UserHarness, groups: []string{GroupHarness}},
	}
	for i := range ids {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		ids[i].token = hex.EncodeToString(b)
	}
	return ids, nil
}

// tokenFile renders kube-apiserver's --token-auth-file: token, user, uid,
// and the groups quoted as one field.
func tokenFile(ids []identity) []byte {
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "%s,%s,%s", id.token, id.user, id.user)
		if len(id.groups) > 0 {
			fmt.Fprintf(&b, ",%q", strings.Join(id.groups, ","))
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// writeIdentities writes the token file and one kubeconfig per identity
// for an API server on 127.0.0.1:port. The CA certificate is named by path:
// kwokctl writes it before it starts any component that reads it.
func (e *Embedded) writeIdentities(ids []identity, port int) error {
	if err := os.WriteFile(e.tokenFilePath(), tokenFile(ids), 0o600); err != nil {
		return fmt.Errorf("writing token file: %w", err)
	}
	for _, id := range ids {
		// kwokctl's names, so that the context is the admin kubeconfig's.
		cfg := e.kubeconfig("kwok-"+e.opts.Name, port, id.user, &clientcmdapi.AuthInfo{Token: id.token})
		if err := clientcmd.WriteToFile(*cfg, e.componentKubeconfigPath(id.component)); err != nil {
			return fmt.Errorf("writing %s kubeconfig: %w", id.component, err)
		}
		if err := os.Chmod(e.componentKubeconfigPath(id.component), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// kubeconfig is a kubeconfig of one context, name, on the API server at
// 127.0.0.1:port (the cluster's CA, by path), as user with auth.
func (e *Embedded) kubeconfig(name string, port int, user string, auth *clientcmdapi.AuthInfo) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:" + strconv.Itoa(port), CertificateAuthority: filepath.Join(e.Dir(), "pki", "ca.crt")}
	cfg.AuthInfos[user] = auth
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: user}
	cfg.CurrentContext = name
	return cfg
}

func (e *Embedded) removeIdentities() {
	_ = os.Remove(e.tokenFilePath())
	for _, c := range []string{"kube-controller-manager", "kube-scheduler", "kwok-controller", "harness"} {
		_ = os.Remove(e.componentKubeconfigPath(c))
	}
}

// FreeLoopbackPort returns a loopback TCP port nothing listens on now.
func FreeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// kwokClusterRole is what the KWOK controller needs and nothing more: it
// watches nodes and pods, writes node status, leases and pod status, and
// deletes the pods it finalises; it records events. (kwok 0.8's own
// kustomize/rbac role grants the same verbs on these resources.)
func kwokClusterRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: UserKwok},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch", "patch", "update"}},
			{APIGroups: []string{""}, Resources: []string{"nodes/status"}, Verbs: []string{"patch", "update"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "patch", "update", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"pods/status"}, Verbs: []string{"patch", "update"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch"}},
			{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
		},
	}
}

// clusterRoleBinding binds role to user, named after the user.
func clusterRoleBinding(user, role string) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
}

// flowSchemas are stormbench's FlowSchemas under realistic APF.
func flowSchemas() []*flowcontrolv1.FlowSchema {
	all := []string{flowcontrolv1.VerbAll}
	heartbeats := flowcontrolv1.PolicyRulesWithSubjects{ResourceRules: []flowcontrolv1.ResourcePolicyRule{
		{Verbs: all, APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Namespaces: []string{"kube-node-lease"}},
		{Verbs: all, APIGroups: []string{""}, Resources: []string{"nodes", "nodes/status"}, ClusterScope: true},
	}}
	scrapes := flowcontrolv1.PolicyRulesWithSubjects{NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{
		{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics", "/livez", "/readyz", "/healthz", "/version"}},
	}}
	byUser := flowcontrolv1.FlowDistinguisherMethodByUserType
	return append([]*flowcontrolv1.FlowSchema{
		// Between system-node-high (400) and system-nodes (500).
		flowSchema(FlowSchemaKwokHeartbeats, 450, "node-high", byUser, heartbeats, userSubject(UserKwok)),
		flowSchema(FlowSchemaKwok, 550, "system", byUser, everyRequest(), userSubject(UserKwok)),
		flowSchema(FlowSchemaObserver, 50, "exempt", "", scrapes, userSubject(UserHarness)),
	}, attributionFlowSchemas()...)
}

// flowSchema is a FlowSchema of one rule, for subjects; dist "" tells no
// flows apart.
func flowSchema(name string, precedence int32, level string, dist flowcontrolv1.FlowDistinguisherMethodType, rules flowcontrolv1.PolicyRulesWithSubjects, subjects []flowcontrolv1.Subject) *flowcontrolv1.FlowSchema {
	rules.Subjects = subjects
	fs := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: level},
			MatchingPrecedence:         precedence,
			Rules:                      []flowcontrolv1.PolicyRulesWithSubjects{rules},
		},
	}
	if dist != "" {
		fs.Spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: dist}
	}
	return fs
}

func userSubject(name string) []flowcontrolv1.Subject {
	return []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: name}}}
}

// everyRequest is a rule that every request, resource or not, matches.
func everyRequest() flowcontrolv1.PolicyRulesWithSubjects {
	all := []string{flowcontrolv1.VerbAll}
	return flowcontrolv1.PolicyRulesWithSubjects{
		ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: all, APIGroups: []string{flowcontrolv1.APIGroupAll},
			Resources: []string{flowcontrolv1.ResourceAll}, ClusterScope: true, Namespaces: []string{flowcontrolv1.NamespaceEvery}}},
		NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: all, NonResourceURLs: []string{flowcontrolv1.NonResourceAll}}},
	}
}

// attributionFlowSchemas are the schemas that only tell flows apart
// (FlowOf): a request keeps the priority level it would have had without
// them. APF classifies a request by the matching schema of lowest
// matchingPrecedence. Each schema here copies one suggested schema of
// k8s.io/apiserver v0.36.3 (pkg/apis/flowcontrol/bootstrap/default.go):
// its rules, priority level and distinguisher, with its subjects narrowed
// to one sender and a precedence one below the original's:
//
//   - system-leader-election (100, leader-election: users
//     system:kube-controller-manager and system:kube-scheduler, leases
//     get/create/update) → 99, one per component;
//   - kube-controller-manager and kube-scheduler (800, workload-high:
//     everything their user sends) → 799;
//   - kube-system-service-accounts (900, workload-high: everything a
//     kube-system service account sends) → 899, one per controller
//     (ControllerServiceAccounts);
//   - global-default (9900, global-default: every authenticated user) →
//     9899 for the harness.
//
// A request a copy matches matches the original; no schema, suggested or
// stormbench's, sits between a copy's precedence and its original's; and
// every schema before the copy is one the request would have met first
// anyway. So a copy takes exactly the requests its original would have
// taken, at the original's priority level: APF's seats, limits and
// borrowing are unchanged. What changes is finer: a fair-queuing flow is
// (schema, distinguisher), so each controller queues apart from the
// others inside workload-high, which matters only when that level queues.
// A controller's own lease writes still meet system-leader-election at
// 100 first (FlowOther), as before. The cost is 49 more schemas for APF
// to walk before global-default, string compares per request, and no
// scrape more: apiserver_flowcontrol_dispatched_requests_total, scraped
// already, carries the flow schema.
func attributionFlowSchemas() []*flowcontrolv1.FlowSchema {
	everything := everyRequest()
	leases := flowcontrolv1.PolicyRulesWithSubjects{
		ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"get", "create", "update"}, APIGroups: []string{"coordination.k8s.io"},
			Resources: []string{"leases"}, Namespaces: []string{flowcontrolv1.NamespaceEvery}}},
	}
	byUser, byNamespace := flowcontrolv1.FlowDistinguisherMethodByUserType, flowcontrolv1.FlowDistinguisherMethodByNamespaceType
	var out []*flowcontrolv1.FlowSchema
	for _, c := range []struct{ flow, user string }{{FlowControllerManager, UserControllerManager}, {FlowScheduler, UserScheduler}} {
		out = append(out,
			flowSchema(flowSchemaPrefix+c.flow+leaderElectionSuffix, 99, priorityLeaderElection, byUser, leases, userSubject(c.user)),
			flowSchema(flowSchemaPrefix+c.flow, 799, priorityWorkloadHigh, byNamespace, everything, userSubject(c.user)))
	}
	for _, sa := range ControllerServiceAccounts {
		subject := []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindServiceAccount,
			ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: metav1.NamespaceSystem, Name: sa}}}
		out = append(out, flowSchema(flowSchemaPrefix+sa, 899, priorityWorkloadHigh, byNamespace, everything, subject))
	}
	return append(out, flowSchema(FlowSchemaHarness, 9899, priorityGlobalDefault, byUser, everything, userSubject(UserHarness)))
}

// applyIdentityObjects creates the KWOK controller's and the harness's RBAC
// and stormbench's FlowSchemas with the admin credentials, leaving any that
// exist. The controller manager and the scheduler need nothing: the API
// server's bootstrap policy binds their users and their controllers'
// service accounts.
func applyIdentityObjects(ctx context.Context, c kubernetes.Interface) error {
	rbac := c.RbacV1()
	steps := []func() error{
		createIfAbsent(ctx, "ClusterRole", rbac.ClusterRoles().Create, kwokClusterRole()),
		createIfAbsent(ctx, "ClusterRoleBinding", rbac.ClusterRoleBindings().Create, clusterRoleBinding(UserKwok, UserKwok)),
		// The harness creates and deletes whatever a fleet holds and
		// impersonates nodes; cluster-admin through RBAC, not system:masters,
		// so that APF does not exempt it.
		createIfAbsent(ctx, "ClusterRoleBinding", rbac.ClusterRoleBindings().Create, clusterRoleBinding(UserHarness, "cluster-admin")),
	}
	for _, fs := range flowSchemas() {
		steps = append(steps, createIfAbsent(ctx, "FlowSchema", c.FlowcontrolV1().FlowSchemas().Create, fs))
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// createIfAbsent is a step that creates obj, a kind, with create; one that
// exists already is left as it is.
func createIfAbsent[T interface{ GetName() string }](ctx context.Context, kind string, create func(context.Context, T, metav1.CreateOptions) (T, error), obj T) func() error {
	return func() error {
		if _, err := create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s %s: %w", kind, obj.GetName(), err)
		}
		return nil
	}
}

// bootstrapIdentities applies the identity objects as soon as the API
// server being created answers, so that the KWOK controller's first lists
// are not refused for long; it retries until ctx ends. The admin
// credentials are kwokctl's, read from the cluster's pki once they exist.
func (e *Embedded) bootstrapIdentities(ctx context.Context, port int) error {
	pki := filepath.Join(e.Dir(), "pki")
	var last error
	w := poll.Wait{Interval: 200 * time.Millisecond}
	err := w.Until(ctx, func(ctx context.Context) (bool, string, error) {
		if _, err := os.Stat(filepath.Join(pki, "admin.key")); err != nil {
			return false, "", nil
		}
		cfg := e.kubeconfig("c", port, "admin", &clientcmdapi.AuthInfo{ClientCertificate: filepath.Join(pki, "admin.crt"), ClientKey: filepath.Join(pki, "admin.key")})
		rc, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
		if err == nil {
			rc.Timeout = 5 * time.Second
			var cs *kubernetes.Clientset
			if cs, err = kubernetes.NewForConfig(rc); err == nil {
				if err = applyIdentityObjects(ctx, cs); err == nil {
					return true, "", nil
				}
			}
		}
		last = err
		return false, "", nil
	})
	if err != nil {
		if last == nil {
			last = ctx.Err()
		}
		return fmt.Errorf("setting up component identities: %w", last)
	}
	return nil
}

// harnessToken is the harness's bearer token, or "" when the cluster runs
// with exempt APF (it has no harness kubeconfig).
func (e *Embedded) harnessToken() (string, error) {
	path := e.componentKubeconfigPath("harness")
	if _, err := os.Stat(path); err != nil {
		return "", nil
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the harness kubeconfig: %w", err)
	}
	for _, a := range cfg.AuthInfos {
		if a.Token != "" {
			return a.Token, nil
		}
	}
	return "", fmt.Errorf("harness kubeconfig %s holds no token", path)
}
