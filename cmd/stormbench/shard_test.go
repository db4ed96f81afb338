package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/cluster/clustertest"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/bench/measure/clientlatency"
	"github.com/stormbench/stormbench/bench/measure/recovery"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

// shardProfile is small enough for two shard processes, an unsharded run
// and the control plane to share this machine: 6 of 12 nodes restart at
// once for a fixed 3 s, so the schedule leaves nothing to chance.
const shardProfile = `apiVersion: stormbench.io/v1alpha1
kind: StormProfile
metadata: {name: shardtest}
seed: 11
fleet: {nodes: 12, podsPerNode: 5}
storm:
  kind: kubelet
  select: {count: 6}
  downtime: {type: fixed, value: 3s}
  featureGates: {ChangeContainerStatusOnKubeletRestart: true}
measurements:
  apiserver: {baseline: 2s}
  endpointSlices: {}
  recovery: {}
`

// shardRunID is shared by the shards and the unsharded run: they drive
// the same fleet, whose node names the schedule is drawn from.
const shardRunID = "shardtest"

// stormCounters are the simulator's counters that must add up across
// shards to the unsharded run's (the flip and patch counters once the
// coalesced flips are added back: coalescedFlipsAddBack).
var stormCounters = []string{self.Restarts, self.PodStatusPatches, self.ReadyFlipsDown,
	self.ReadyFlipsUp, self.TokenRequests, self.ObjectWatches, self.ContainerRestarts,
	self.PodsRejected, self.PodsDeleted, self.Errors}

// coalescedFlipsAddBack are the request rows and counters one coalesced
// flip lowers by one (checkShardedMatchesUnsharded).
var coalescedFlipsAddBack = []string{"GET pods", "PATCH pods/status",
	self.PodStatusPatches, self.ReadyFlipsDown, self.ReadyFlipsUp}

// TestShardedRunMatchesUnsharded runs one storm as two shard processes
// against one embedded cluster, merges their results, and checks the
// merged totals equal those of one unsharded run of the same profile and
// seed on the same fleet: restarts, the simulated kubelets' requests per
// verb and resource, and the simulator's counters.
func TestShardedRunMatchesUnsharded(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	dir, prof, _ := writeShardProfile(t)
	c := sharedCluster.Get(t)
	bin := stormbenchBinary(t)
	target := []string{"--kubeconfig", c.Kubeconfig(), "--context", c.Target.Context, "--yes"}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	stormbench := func(args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.WaitDelay = 30 * time.Second
		return cmd
	}
	runCmd := func(name string, args ...string) string {
		t.Helper()
		out, err := stormbench(args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s\n%s", name, err, out, c.LogTail("kube-apiserver", 20))
		}
		return string(out)
	}

	// One fleet for every run; `run --keep-fleet` finds it provisioned.
	runCmd("fleet up", append([]string{"fleet", "up", "--run-id", shardRunID, "--profile", prof}, target...)...)
	fleetDeleted := false
	t.Cleanup(func() {
		if !fleetDeleted {
			_ = exec.Command(bin, append([]string{"fleet", "down", "--run-id", shardRunID}, target...)...).Run()
		}
	})
	runArgs := func(resultPath string, extra ...string) []string {
		return append(append([]string{"run", "--profile", prof, "--run-id", shardRunID, "--keep-fleet", "--result", resultPath}, target...), extra...)
	}

	// Two shard processes in parallel, storms starting together. The lead
	// covers process start, the idempotent fleet check, informer syncs and
	// the 2 s baseline of both processes on a busy machine.
	startAt := time.Now().Add(45 * time.Second).UTC().Truncate(time.Second)
	shardPaths := []string{filepath.Join(dir, "shard-0.json"), filepath.Join(dir, "shard-1.json")}
	type done struct {
		i   int
		err error
		log string
	}
	results := make(chan done, 2)
	for i, path := range shardPaths {
		cmd := stormbench(runArgs(path, "--shard", fmt.Sprintf("%d/2", i), "--start-at", startAt.Format(time.RFC3339))...)
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { err := cmd.Wait(); results <- done{i, err, log.String()} }()
	}
	var failed []string
	for range shardPaths {
		d := <-results
		if d.err != nil {
			failed = append(failed, fmt.Sprintf("shard %d: %v\n%s", d.i, d.err, d.log))
		}
	}
	if len(failed) > 0 {
		t.Fatalf("shard runs failed:\n%s", strings.Join(failed, "\n"))
	}
	merged := filepath.Join(dir, "merged.json")
	t.Logf("%s", runCmd("merge", append([]string{"merge", "--output-file", merged}, shardPaths...)...))

	// The fleet gave every node its CSINode, as a real kubelet's first
	// start does, so the shards' restarts created none and the unsharded
	// run's restarts find the same state.
	assertCSINodes(ctx, t, c)
	single := filepath.Join(dir, "single.json")
	runCmd("unsharded run", runArgs(single)...)
	runCmd("fleet down", append([]string{"fleet", "down", "--run-id", shardRunID}, target...)...)
	fleetDeleted = true

	checkShardedMatchesUnsharded(t, startAt, shardPaths, merged, single)
}

// checkShardedMatchesUnsharded checks two shards' results of shardProfile
// against their merge and an unsharded run of the same profile and seed:
// each shard started its storm at --start-at or later and did 3 of the 6
// restarts, and the merged restarts, simulated kubelets' requests per verb
// and resource, simulator counters and recovery samples equal the
// unsharded run's.
func checkShardedMatchesUnsharded(t *testing.T, startAt time.Time, shardPaths []string, merged, single string) {
	t.Helper()
	read := func(path string) *result.Result {
		t.Helper()
		r, err := result.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Variants) != 1 || !r.Complete {
			t.Fatalf("%s: %d variant runs, complete %t; errors %q", filepath.Base(path), len(r.Variants), r.Complete, r.Errors)
		}
		return r
	}
	shard0, shard1, m, s := read(shardPaths[0]), read(shardPaths[1]), read(merged), read(single)
	mv, sv := &m.Variants[0], &s.Variants[0]
	for i, sh := range []*result.Result{shard0, shard1} {
		if st := sh.Variants[0].StormStart; st.Before(startAt) {
			t.Errorf("shard %d's storm started at %s, before --start-at %s", i, st.Format(time.RFC3339Nano), startAt.Format(time.RFC3339))
		}
	}
	t.Logf("storm starts: shard 0 %s, shard 1 %s (--start-at %s)", shard0.Variants[0].StormStart.Format("15:04:05.000"),
		shard1.Variants[0].StormStart.Format("15:04:05.000"), startAt.Format("15:04:05"))

	// Restarts: 6 = 3 + 3.
	t.Logf("restarts: shards %d + %d = merged %d; unsharded %d", shard0.Variants[0].Restarts, shard1.Variants[0].Restarts, mv.Restarts, sv.Restarts)
	if mv.Restarts != 6 || sv.Restarts != 6 || shard0.Variants[0].Restarts != 3 || shard1.Variants[0].Restarts != 3 {
		t.Errorf("restarts: shards %d + %d, merged %d, unsharded %d; want 3 + 3, 6, 6",
			shard0.Variants[0].Restarts, shard1.Variants[0].Restarts, mv.Restarts, sv.Restarts)
	}

	// A legacy flip due while the node's status manager is busy is
	// written as one status (kubelet.Counters.ReadyFlipsCoalesced): one
	// GET and one PATCH where a written flip takes two of each. Which flips
	// coalesce depends on the API server's latency at that moment, so the
	// two runs may differ there; with the coalesced flips added back, every
	// figure must match exactly.
	coalesced := func(v *result.VariantRun) float64 {
		n, _ := v.Measurement(self.Name).Value(self.ReadyFlipsCoalesced, result.WindowStorm)
		return n
	}
	mCo, sCo := coalesced(mv), coalesced(sv)
	t.Logf("flips coalesced by a busy status manager: merged %.0f, unsharded %.0f", mCo, sCo)

	// The simulated kubelets' requests, per verb and resource.
	mReq, sReq := kubeletRequests(mv), kubeletRequests(sv)
	if len(sReq) == 0 {
		t.Fatal("the unsharded run recorded no kubelet requests")
	}
	for _, k := range coalescedFlipsAddBack {
		if _, ok := sReq[k]; ok {
			mReq[k] += mCo
			sReq[k] += sCo
		}
	}
	var lines, diffs []string
	total := [2]float64{}
	for _, k := range slices.Sorted(maps.Keys(union(mReq, sReq))) {
		lines = append(lines, fmt.Sprintf("  %-40s merged %5.0f  unsharded %5.0f", k, mReq[k], sReq[k]))
		total[0] += mReq[k]
		total[1] += sReq[k]
		if mReq[k] != sReq[k] {
			diffs = append(diffs, k)
		}
	}
	t.Logf("kubelet requests (total merged %.0f, unsharded %.0f):\n%s", total[0], total[1], strings.Join(lines, "\n"))
	if len(diffs) > 0 {
		t.Errorf("kubelet requests differ for %s", strings.Join(diffs, ", "))
	}

	// The simulator's counters.
	for _, name := range stormCounters {
		got, _ := mv.Measurement(self.Name).Value(name, result.WindowStorm)
		want, ok := sv.Measurement(self.Name).Value(name, result.WindowStorm)
		if !ok {
			t.Errorf("unsharded run has no storm counter %s", name)
			continue
		}
		if slices.Contains(coalescedFlipsAddBack, name) {
			got, want = got+mCo, want+sCo
		}
		t.Logf("storm %-18s merged %4.0f  unsharded %4.0f", name, got, want)
		if got != want {
			t.Errorf("storm counter %s: merged %v, unsharded %v", name, got, want)
		}
	}

	// Recovery: one node_ready sample per restart in both.
	for _, r := range []struct {
		name string
		v    *result.VariantRun
	}{{"merged", mv}, {"unsharded", sv}} {
		h := r.v.Measurement(recovery.Name).Histogram(recovery.Node, result.WindowStorm)
		if h == nil || h.Summary.Count != 6 {
			t.Errorf("%s node_ready: %+v, want 6 samples", r.name, h)
		}
	}
	if result.MergedShards(m) != 2 {
		t.Errorf("merged result not marked as merged: %v", m.Run.Cluster.Settings.Flags)
	}
}

// shardCluster writes shardProfile into a temporary directory and starts an
// embedded cluster for it: the directory, the profile's path, the profile
// and the cluster.
func shardCluster(t *testing.T) (dir, prof string, p *profiles.Profile, c *clustertest.Cluster) {
	t.Helper()
	dir, prof, p = writeShardProfile(t)
	return dir, prof, p, clustertest.Start(t, p)
}

// writeShardProfile writes shardProfile into a temporary directory: the
// directory, the profile's path and the profile.
func writeShardProfile(t *testing.T) (dir, prof string, p *profiles.Profile) {
	t.Helper()
	dir = t.TempDir()
	prof = filepath.Join(dir, "shardtest.yaml")
	if err := os.WriteFile(prof, []byte(shardProfile), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := profiles.Load(prof)
	if err != nil {
		t.Fatal(err)
	}
	return dir, prof, p
}

// deleteCSINodes deletes the CSINodes of the test fleet's nodes.
func assertCSINodes(ctx context.Context, t *testing.T, c *clustertest.Cluster) {
	t.Helper()
	nodes, err := c.Target.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: fleet.RunLabel + "=" + shardRunID})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		cn, err := c.Target.Client.StorageV1().CSINodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("node %s has no CSINode: %v", n.Name, err)
			continue
		}
		if len(cn.OwnerReferences) != 1 || cn.OwnerReferences[0].UID != n.UID {
			t.Errorf("CSINode %s is not owned by its node: %+v", n.Name, cn.OwnerReferences)
		}
	}
}

// kubeletRequests maps "VERB resource[/subresource]" to the simulated
// kubelets' request count.
func kubeletRequests(v *result.VariantRun) map[string]float64 {
	out := map[string]float64{}
	for _, x := range v.Measurement(clientlatency.Name).Values {
		if x.Name != clientlatency.Requests || x.Labels[result.LabelSource] != "kubelet" {
			continue
		}
		k := x.Labels[result.LabelVerb] + " " + strings.TrimSuffix(x.Labels[result.LabelResource]+"/"+x.Labels[result.LabelSubresource], "/")
		out[k] += x.Value
	}
	return out
}

func union(a, b map[string]float64) map[string]float64 {
	out := maps.Clone(a)
	for k, v := range b {
		out[k] += v
	}
	return out
}

// manifestDir holds the manifests for sharded runs inside a cluster.
const manifestDir = "../../scripts/kubernetes"

// decodeManifests strictly decodes every document of a YAML file into a
// typed object (an unknown or duplicate field is an error).
func decodeManifests(t *testing.T, path string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	codecs := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict)
	dec := utilyaml.NewYAMLReader(bufioReader(data))
	var out []runtime.Object
	for {
		doc, err := dec.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, _, err := codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: document %d: %v", path, len(out), err)
		}
		out = append(out, obj)
	}
	return out
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, l := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.Bytes()
}

// TestKubernetesManifests decodes scripts/kubernetes and checks what a
// sharded run needs: an Indexed Job whose shard count agrees with its
// completions, a kubeconfig stormbench can load, RBAC that grants every
// permission a run uses, and a KWOK controller that manages nodes by
// stormbench's label.
func TestKubernetesManifests(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", manifestDir, err)
	}
	var objs []runtime.Object
	for _, f := range files {
		objs = append(objs, decodeManifests(t, f)...)
	}
	var (
		job   *batchv1.Job
		jobs  []*batchv1.Job
		kwok  *appsv1.Deployment
		roles []*rbacv1.ClusterRole
		kcfg  string
		prof  string
	)
	for _, o := range objs {
		switch o := o.(type) {
		case *batchv1.Job:
			if o.Name == "stormbench-shards" {
				job = o
			}
			jobs = append(jobs, o)
		case *appsv1.Deployment:
			if o.Name == "kwok-controller" {
				kwok = o
			}
		case *rbacv1.ClusterRole:
			roles = append(roles, o)
		case *corev1.ConfigMap:
			if s, ok := o.Data["kubeconfig"]; ok {
				kcfg = s
			}
			if s, ok := o.Data["profile.yaml"]; ok {
				prof = s
			}
		}
	}

	if job == nil {
		t.Fatal("no Job")
	}
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Error("the Job is not Indexed")
	}
	if job.Spec.Completions == nil || job.Spec.Parallelism == nil || *job.Spec.Completions != *job.Spec.Parallelism {
		t.Error("the Job's completions and parallelism must be set and equal: every shard runs at once")
	}
	args := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " ")
	if want := fmt.Sprintf("--shard=$(JOB_COMPLETION_INDEX)/%d", ptrValue(job.Spec.Completions)); !strings.Contains(args, want) {
		t.Errorf("Job args lack %s: %s", want, args)
	}
	for _, want := range []string{"--start-at=", "--keep-fleet", "--context=", "--yes", "--kubeconfig="} {
		if !strings.Contains(args, want) {
			t.Errorf("Job args lack %s: %s", want, args)
		}
	}
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever || ptrValue(job.Spec.BackoffLimitPerIndex) != 0 {
		t.Error("a failed shard must not be retried: its restarts would no longer follow the shared start")
	}
	// Every step drives the same fleet.
	runIDs := map[string]bool{}
	for _, j := range jobs {
		for _, e := range j.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "RUN_ID" {
				runIDs[e.Value] = true
				if err := validateRunID(e.Value); err != nil {
					t.Errorf("Job %s: %v", j.Name, err)
				}
			}
		}
	}
	if len(runIDs) != 1 || len(jobs) < 3 {
		t.Errorf("%d Jobs with run ids %v; want fleet up, shards and fleet down with one run id", len(jobs), slices.Collect(maps.Keys(runIDs)))
	}

	// The profile loads and validates.
	if prof == "" {
		t.Fatal("no ConfigMap with the profile")
	}
	pf := filepath.Join(t.TempDir(), "profile.yaml")
	if err := os.WriteFile(pf, []byte(prof), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := profiles.Load(pf); err != nil {
		t.Errorf("profile in config.yaml: %v", err)
	}

	if kcfg == "" {
		t.Fatal("no ConfigMap with a kubeconfig")
	}
	cfg, err := clientcmd.Load([]byte(kcfg))
	if err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	// The service account's own token and CA, read from the files the
	// kubelet mounts (client-go rereads a rotated token file).
	const saDir = "/var/run/secrets/kubernetes.io/serviceaccount/"
	kctx := cfg.Contexts[cfg.CurrentContext]
	if kctx == nil || cfg.Clusters[kctx.Cluster] == nil || cfg.AuthInfos[kctx.AuthInfo] == nil {
		t.Fatalf("kubeconfig: current context %q does not name a cluster and a user", cfg.CurrentContext)
	}
	if cl := cfg.Clusters[kctx.Cluster]; cl.CertificateAuthority != saDir+"ca.crt" || !strings.HasPrefix(cl.Server, "https://kubernetes.default.svc") {
		t.Errorf("kubeconfig cluster: server %q, CA %q", cl.Server, cl.CertificateAuthority)
	}
	if u := cfg.AuthInfos[kctx.AuthInfo]; u.TokenFile != saDir+"token" {
		t.Errorf("kubeconfig user: tokenFile %q, want %s", u.TokenFile, saDir+"token")
	}
	if !strings.Contains(args, "--context="+cfg.CurrentContext) {
		t.Errorf("Job args do not select the kubeconfig's context %q: %s", cfg.CurrentContext, args)
	}

	if kwok == nil {
		t.Fatal("no kwok-controller Deployment")
	}
	kargs := strings.Join(append(kwok.Spec.Template.Spec.Containers[0].Command, kwok.Spec.Template.Spec.Containers[0].Args...), " ")
	for _, want := range []string{"--manage-all-nodes=false", "--manage-nodes-with-label-selector=" + cluster.KubeletLabel + "=" + cluster.KubeletUp} {
		if !strings.Contains(kargs, want) {
			t.Errorf("kwok-controller args lack %s (preflight looks for it verbatim): %s", want, kargs)
		}
	}
	// Every flag exists in the kwok the manifest names (an unknown flag
	// stops the controller), checked against the same version's binary.
	if comps, err := cluster.FindComponentsFor("", kubeversion.Version{}); err == nil {
		help, err := exec.Command(comps.Path(cluster.BinKwok), "--help").CombinedOutput()
		if err != nil {
			t.Fatalf("kwok --help: %v\n%s", err, help)
		}
		for _, a := range kwok.Spec.Template.Spec.Containers[0].Args {
			name, _, _ := strings.Cut(a, "=")
			if strings.HasPrefix(name, "--") && !strings.Contains(string(help), " "+name+" ") {
				t.Errorf("kwok-controller arg %s: kwok has no flag %s", a, name)
			}
		}
	} else {
		t.Logf("kwok flags not checked (no components: %v)", err)
	}

	// Every permission a run uses (bench/cluster.runPermissions plus the
	// watches, gets and the /metrics scrape the measurements make).
	needed := []struct{ verb, group, resource, name string }{
		{"create", "", "nodes", ""}, {"delete", "", "nodes", ""}, {"deletecollection", "", "nodes", ""}, {"get", "", "nodes", ""},
		{"list", "", "nodes", ""}, {"watch", "", "nodes", ""}, {"patch", "", "nodes", ""}, {"update", "", "nodes", ""},
		{"patch", "", "nodes/status", ""},
		{"create", "", "namespaces", ""}, {"delete", "", "namespaces", ""}, {"list", "", "namespaces", ""},
		{"create", "", "pods", ""}, {"get", "", "pods", ""}, {"list", "", "pods", ""}, {"watch", "", "pods", ""}, {"delete", "", "pods", ""},
		{"create", "", "pods/eviction", ""},
		{"create", "", "services", ""}, {"list", "", "services", ""}, {"watch", "", "services", ""},
		{"create", "", "configmaps", ""}, {"create", "", "secrets", ""}, {"create", "", "serviceaccounts", ""}, {"get", "", "serviceaccounts", ""},
		{"create", "apps", "deployments", ""}, {"create", "apps", "statefulsets", ""}, {"create", "apps", "daemonsets", ""},
		{"create", "policy", "poddisruptionbudgets", ""},
		{"list", "discovery.k8s.io", "endpointslices", ""}, {"watch", "discovery.k8s.io", "endpointslices", ""},
		{"list", "coordination.k8s.io", "leases", ""}, {"watch", "coordination.k8s.io", "leases", ""},
		{"create", "authorization.k8s.io", "selfsubjectaccessreviews", ""},
		{"impersonate", "", "groups", "system:nodes"}, {"impersonate", "", "groups", "system:authenticated"},
	}
	allows := func(verb, group, resource, name string) bool {
		for _, r := range roles {
			for _, rule := range r.Rules {
				if matches(rule.Verbs, verb) && matches(rule.APIGroups, group) && matches(rule.Resources, resource) &&
					(len(rule.ResourceNames) == 0 || slices.Contains(rule.ResourceNames, name)) {
					return true
				}
			}
		}
		return false
	}
	for _, n := range needed {
		if !allows(n.verb, n.group, n.resource, n.name) {
			t.Errorf("no ClusterRole allows %s %s/%s %s", n.verb, n.group, n.resource, n.name)
		}
	}
	metrics := false
	for _, r := range roles {
		for _, rule := range r.Rules {
			metrics = metrics || slices.Contains(rule.NonResourceURLs, "/metrics") && matches(rule.Verbs, "get")
		}
	}
	if !metrics {
		t.Error("no ClusterRole allows GET /metrics (the apiserver measurement scrapes it)")
	}
	// Nothing broader than needed: no wildcards.
	for _, r := range roles {
		for _, rule := range r.Rules {
			if slices.Contains(rule.Verbs, "*") || slices.Contains(rule.Resources, "*") || slices.Contains(rule.APIGroups, "*") {
				t.Errorf("ClusterRole %s has a wildcard rule: %+v", r.Name, rule)
			}
		}
	}

	// The generated node impersonation rule names exactly the fleet's nodes.
	out, err := exec.Command("sh", filepath.Join(manifestDir, "impersonate-nodes.sh"), "big-storm", "3").Output()
	if err != nil {
		t.Fatalf("impersonate-nodes.sh: %v", err)
	}
	gen := filepath.Join(t.TempDir(), "impersonate.yaml")
	if err := os.WriteFile(gen, out, 0o600); err != nil {
		t.Fatal(err)
	}
	roles = nil
	for _, o := range decodeManifests(t, gen) {
		if r, ok := o.(*rbacv1.ClusterRole); ok {
			roles = append(roles, r)
		}
	}
	for i := range 3 {
		if user := "system:node:big-storm-node-0000" + fmt.Sprint(i); !allows("impersonate", "", "users", user) {
			t.Errorf("generated RBAC does not allow impersonating %s:\n%s", user, out)
		}
	}
	if allows("impersonate", "", "users", "system:node:big-storm-node-00003") || allows("impersonate", "", "users", "admin") {
		t.Errorf("generated RBAC allows impersonating users outside the fleet:\n%s", out)
	}
}

func matches(list []string, s string) bool { return slices.Contains(list, s) }

func ptrValue(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func bufioReader(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }
