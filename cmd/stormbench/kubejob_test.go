package main

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/cluster/clustertest"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/realnode"
)

// jobImage and kwokImageName are the names the test's images are imported
// under.
const (
	jobImage      = "stormbench.io/stormbench:test"
	kwokImageName = "stormbench.io/kwok:test"
)

// TestKubernetesJobOnRealNodes runs the sharded run of scripts/kubernetes
// for real: three containerd-backed nodes join the embedded cluster, a
// stormbench image built from this package's static binary and a KWOK
// image from bin/kwok are imported into their containerds, and the
// manifests are applied as the README says (upstream KWOK's install with
// kwok-controller.yaml in place of its Deployment, RBAC,
// impersonate-nodes.sh, config, fleet-up Job, the Indexed Job of 2 shards,
// fleet-down Job), with the changes localCluster makes for a cluster whose
// API server listens on loopback only. The embedded cluster's own KWOK
// process is stopped: the in-cluster controller manages the fleet. The shards' result files,
// merged, must equal an unsharded run of the same profile and seed on the
// same fleet, as in TestShardedRunMatchesUnsharded.
func TestKubernetesJobOnRealNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	dir, prof, p, c := shardCluster(t)
	comps := c.Components()
	clustertest.SkipUnlessRoot(t, func() error { return realnode.CheckContainerdHost(comps) })
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	cs := c.Target.Client

	// The image: the static binary as /stormbench, as the README's
	// Dockerfile builds it.
	bin := stormbenchBinary(t)
	image := filepath.Join(dir, "stormbench-image.tar")
	if err := realnode.WriteImage(image, bin, jobImage, "stormbench"); err != nil {
		t.Fatal(err)
	}
	// The KWOK image: make components builds kwok static, as the
	// upstream image's binary is.
	if ef, err := elf.Open(comps.Path(cluster.BinKwok)); err == nil {
		for _, prog := range ef.Progs {
			if prog.Type == elf.PT_INTERP {
				t.Fatalf("%s is dynamically linked and cannot run in an image without a libc: rebuild it static with `rm bin/kwok bin/kwokctl && make components`", comps.Path(cluster.BinKwok))
			}
		}
		ef.Close()
	}
	kwokImage := filepath.Join(dir, "kwok-image.tar")
	if err := realnode.WriteImage(kwokImage, comps.Path(cluster.BinKwok), kwokImageName, "kwok"); err != nil {
		t.Fatal(err)
	}

	// Three real nodes for the pods: the KWOK controller, and the Jobs'
	// (the shards' affinity keeps them off KWOK nodes and prefers one shard
	// per node). Each pod requests 2 CPUs, a whole real node.
	var nodes []*realnode.ContainerdNode
	t.Cleanup(func() {
		for _, n := range nodes {
			if err := n.Stop(); err != nil {
				t.Errorf("stopping %s: %v", n.Name(), err)
			}
			if m := realnode.Mounts(filepath.Dir(n.KubeletLog())); len(m) > 0 {
				t.Errorf("mounts left by %s: %v", n.Name(), m)
			}
		}
	})
	for i := range 3 {
		name := fmt.Sprintf("job-node-%d", i)
		n, err := realnode.NewContainerd(realnode.Options{
			Components: comps, AdminKubeconfig: c.Embedded.Kubeconfig(), Context: c.Target.Context,
			Dir: filepath.Join(c.Dir(), cluster.RealNodesDir, name), Name: name, PodCIDR: fmt.Sprintf("10.244.%d.0/24", 250+i),
			Labels: map[string]string{fleet.TypeLabel: "containerd"},
		})
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
		if err := n.Start(nil); err != nil {
			t.Fatal(err)
		}
		for _, img := range []string{image, kwokImage} {
			if err := n.ImportImage(img); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, n := range nodes {
		if err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
			nd, err := cs.CoreV1().Nodes().Get(ctx, n.Name(), metav1.GetOptions{})
			return err == nil && fleet.NodeReady(nd), nil
		}); err != nil {
			t.Fatalf("node %s never Ready: %v\n%s", n.Name(), err, tail(n.KubeletLog(), 30))
		}
	}
	podLogs := func(prefix string) string {
		var b strings.Builder
		for _, n := range nodes {
			logs, _ := filepath.Glob(filepath.Join(filepath.Dir(n.KubeletLog()), "pod-logs", prefix+"*", "*", "*.log"))
			for _, l := range logs {
				fmt.Fprintf(&b, "--- %s:\n%s\n", strings.TrimPrefix(l, filepath.Dir(n.KubeletLog())+"/"), tail(l, 25))
			}
		}
		return b.String()
	}

	// The results volume: a host directory both nodes see (they share this
	// machine), writable by the Jobs' UID 65532.
	results := filepath.Join(dir, "results")
	if err := os.Mkdir(results, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(results, 65532, 65532); err != nil {
		t.Fatal(err)
	}
	local := localCluster{host: c.Target.Host, results: results, shards: 2}

	// 0. KWOK inside the cluster, as the README's "Before you start" says:
	// upstream's install (kustomize/kwok: CRDs, RBAC, the kwok ConfigMap,
	// its Deployment; the fast stages), then kwok-controller.yaml in place
	// of that Deployment, on a real node. The embedded cluster's own KWOK
	// process stops first: two controllers must not manage one fleet.
	kwokModule, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kwok").Output()
	if err != nil {
		t.Fatalf("finding the kwok module: %v", err)
	}
	kubectl := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, comps.Path(cluster.BinKubectl), append([]string{"--kubeconfig", c.Kubeconfig()}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	for _, k := range []string{"kwok", "stage/fast"} {
		kubectl("apply", "-k", filepath.Join(strings.TrimSpace(string(kwokModule)), "kustomize", k))
	}
	if pid := c.Embedded.PIDs()["kwok-controller"]; pid > 0 {
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		for cluster.ProcessAlive(pid) {
			time.Sleep(100 * time.Millisecond)
		}
	}
	local.apiPort = c.Target.Host[strings.LastIndexByte(c.Target.Host, ':')+1:]
	apply(ctx, t, cs, local, decodeManifests(t, filepath.Join(manifestDir, "kwok-controller.yaml")))
	t.Cleanup(func() {
		_ = cs.AppsV1().Deployments("kube-system").Delete(context.Background(), "kwok-controller", metav1.DeleteOptions{})
	})
	var kwokPod string
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "app=kwok-controller"})
		if err != nil {
			return false, nil
		}
		for _, p := range pods.Items {
			if len(p.Spec.Containers) == 1 && p.Spec.Containers[0].Image == kwokImageName && podReady(&p) {
				kwokPod = p.Name + " on " + p.Spec.NodeName
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("the KWOK controller never became Ready: %v\n%s\npod logs:\n%s", err, describePods(ctx, cs, "kube-system", "app=kwok-controller"), podLogs("kube-system_kwok-controller"))
	}
	t.Logf("KWOK controller: %s", kwokPod)

	// 1. Permissions, including impersonation of exactly this fleet's nodes.
	apply(ctx, t, cs, local, decodeManifests(t, filepath.Join(manifestDir, "rbac.yaml")))
	imp, err := exec.Command("sh", filepath.Join(manifestDir, "impersonate-nodes.sh"), shardRunID, fmt.Sprint(p.Fleet.Nodes)).Output()
	if err != nil {
		t.Fatalf("impersonate-nodes.sh: %v", err)
	}
	impFile := filepath.Join(dir, "impersonate.yaml")
	if err := os.WriteFile(impFile, imp, 0o600); err != nil {
		t.Fatal(err)
	}
	apply(ctx, t, cs, local, decodeManifests(t, impFile))
	// 2. Kubeconfig and profile (the results volume is the host directory).
	config := decodeManifests(t, filepath.Join(manifestDir, "config.yaml"))
	for _, o := range config {
		if cm, ok := o.(*corev1.ConfigMap); ok && cm.Name == "stormbench-profile" {
			cm.Data["profile.yaml"] = shardProfile
		}
	}
	apply(ctx, t, cs, local, config)
	t.Cleanup(func() {
		// The namespace holds the Jobs and their pods; the real nodes'
		// kubelets must see the pods go before they stop.
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), "stormbench", metav1.DeleteOptions{})
	})

	runJob := func(file string, timeout time.Duration, mutate func(*batchv1.Job)) *batchv1.Job {
		t.Helper()
		objs := decodeManifests(t, filepath.Join(manifestDir, file))
		if mutate != nil {
			for _, o := range objs {
				mutate(o.(*batchv1.Job))
			}
		}
		apply(ctx, t, cs, local, objs)
		job := objs[0].(*batchv1.Job)
		var got *batchv1.Job
		err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
			var err error
			got, err = cs.BatchV1().Jobs("stormbench").Get(ctx, job.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			for _, cond := range got.Status.Conditions {
				if cond.Status == corev1.ConditionTrue && (cond.Type == batchv1.JobComplete || cond.Type == batchv1.JobFailed) {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil || got.Status.Succeeded != ptrValue(got.Spec.Completions) {
			t.Fatalf("Job %s: %v; status %+v\npods:\n%s%s", job.Name, err, got.Status, podLogs("stormbench_"), podLogs("kube-system_kwok-controller"))
		}
		return got
	}

	// 4. Provision the fleet once (step 3 of the README, preflight, is
	// TestKubernetesManifests' concern).
	runJob("fleet-up.yaml", 5*time.Minute, nil)
	fleetDeleted := false
	t.Cleanup(func() {
		if !fleetDeleted {
			_ = exec.Command(bin, "fleet", "down", "--run-id", shardRunID, "--kubeconfig", c.Kubeconfig(), "--context", c.Target.Context, "--yes").Run()
		}
	})

	// 5. The shards, starting together. The lead covers scheduling, the
	// container start, the fleet check and the baseline.
	startAt := time.Now().Add(40 * time.Second).UTC().Truncate(time.Second)
	runJob("job.yaml", 8*time.Minute, func(j *batchv1.Job) {
		setEnv(j, "START_AT", startAt.Format(time.RFC3339))
	})
	pods, err := cs.CoreV1().Pods("stormbench").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=shard"})
	if err != nil {
		t.Fatal(err)
	}
	var placed []string
	for _, pod := range pods.Items {
		placed = append(placed, pod.Name+" on "+pod.Spec.NodeName)
		if !strings.HasPrefix(pod.Spec.NodeName, "job-node-") {
			t.Errorf("shard pod %s ran on %q, not on a real node", pod.Name, pod.Spec.NodeName)
		}
	}
	t.Logf("shard pods: %s", strings.Join(placed, ", "))

	// 6. The results, merged.
	var shardPaths []string
	for i := range local.shards {
		shardPaths = append(shardPaths, filepath.Join(results, shardRunID, fmt.Sprintf("shard-%d.json", i)))
	}
	merged := filepath.Join(dir, "merged.json")
	if out, err := exec.CommandContext(ctx, bin, append([]string{"merge", "--output-file", merged}, shardPaths...)...).CombinedOutput(); err != nil {
		t.Fatalf("merge: %v\n%s", err, out)
	}

	// The unsharded run of the same profile and seed on the same fleet, from
	// this machine, then 7. the fleet removed by its Job.
	assertCSINodes(ctx, t, c)
	single := filepath.Join(dir, "single.json")
	if out, err := exec.CommandContext(ctx, bin, "run", "--profile", prof, "--run-id", shardRunID, "--keep-fleet", "--result", single,
		"--kubeconfig", c.Kubeconfig(), "--context", c.Target.Context, "--yes").CombinedOutput(); err != nil {
		t.Fatalf("unsharded run: %v\n%s", err, out)
	}
	runJob("fleet-down.yaml", 5*time.Minute, nil)
	fleetDeleted = true
	left, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: fleet.RunLabel + "=" + shardRunID})
	if err != nil || len(left.Items) > 0 {
		t.Errorf("fleet-down left %d nodes (%v)", len(left.Items), err)
	}

	checkShardedMatchesUnsharded(t, startAt, shardPaths, merged, single)
}

// localCluster is what a sharded run on the embedded cluster changes in
// the manifests of scripts/kubernetes (README: "A cluster without
// in-cluster networking"):
//   - its API server listens on 127.0.0.1 only and there is no kube-proxy
//     or DNS, so the pods use the host network and the kubeconfig names the
//     loopback address (the serving certificate covers 127.0.0.1);
//   - there is no storage provisioner: the results volume is a host
//     directory, which every node of one machine shares;
//   - there is no registry: the image is imported into each node's
//     containerd and never pulled;
//   - N = shards;
//   - the KWOK controller reaches the API server the same way: host
//     network, and in-cluster configuration pointed at the loopback
//     address (KUBERNETES_SERVICE_HOST/PORT).
type localCluster struct {
	host    string
	apiPort string
	results string
	shards  int32
}

func (l localCluster) mutate(o runtime.Object) (runtime.Object, bool) {
	switch o := o.(type) {
	case *corev1.PersistentVolumeClaim:
		return nil, false
	case *corev1.ConfigMap:
		if k, ok := o.Data["kubeconfig"]; ok {
			o.Data["kubeconfig"] = strings.ReplaceAll(k, "https://kubernetes.default.svc", l.host)
		}
	case *appsv1.Deployment:
		ps := &o.Spec.Template.Spec
		ps.HostNetwork, ps.DNSPolicy = true, corev1.DNSDefault
		for i := range ps.Containers {
			ct := &ps.Containers[i]
			ct.Image, ct.ImagePullPolicy = kwokImageName, corev1.PullNever
			ct.Env = append(ct.Env, corev1.EnvVar{Name: "KUBERNETES_SERVICE_HOST", Value: "127.0.0.1"}, corev1.EnvVar{Name: "KUBERNETES_SERVICE_PORT", Value: l.apiPort})
		}
	case *batchv1.Job:
		ps := &o.Spec.Template.Spec
		ps.HostNetwork = true
		ps.DNSPolicy = corev1.DNSDefault
		for i := range ps.Containers {
			ct := &ps.Containers[i]
			ct.Image, ct.ImagePullPolicy = jobImage, corev1.PullNever
			for j, a := range ct.Args {
				if strings.HasPrefix(a, "--shard=") {
					ct.Args[j] = fmt.Sprintf("--shard=$(JOB_COMPLETION_INDEX)/%d", l.shards)
				}
			}
		}
		for i := range ps.Volumes {
			if ps.Volumes[i].PersistentVolumeClaim != nil {
				ps.Volumes[i].VolumeSource = corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: l.results}}
			}
		}
		setEnv(o, "RUN_ID", shardRunID)
		if o.Spec.CompletionMode != nil && *o.Spec.CompletionMode == batchv1.IndexedCompletion {
			o.Spec.Completions, o.Spec.Parallelism, o.Spec.MaxFailedIndexes = &l.shards, &l.shards, &l.shards
		}
	}
	return o, true
}

// describePods says where each selected pod is and why it is not running:
// its phase, each container's state, and the namespace's warning events.
func describePods(ctx context.Context, cs kubernetes.Interface, ns, selector string) string {
	var b strings.Builder
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return err.Error()
	}
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "pod %s on %q: %s\n", p.Name, p.Spec.NodeName, p.Status.Phase)
		for _, c := range p.Status.Conditions {
			if c.Status != corev1.ConditionTrue {
				fmt.Fprintf(&b, "  %s=%s %s %s\n", c.Type, c.Status, c.Reason, c.Message)
			}
		}
		for _, c := range p.Status.ContainerStatuses {
			fmt.Fprintf(&b, "  container %s: image %s restarts %d %+v last %+v\n", c.Name, c.Image, c.RestartCount, c.State, c.LastTerminationState)
		}
	}
	events, _ := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "type=Warning"})
	if events != nil {
		for _, e := range events.Items {
			fmt.Fprintf(&b, "event %s/%s: %s %s\n", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
	return b.String()
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func setEnv(j *batchv1.Job, name, value string) {
	for i := range j.Spec.Template.Spec.Containers {
		env := j.Spec.Template.Spec.Containers[i].Env
		if k := slices.IndexFunc(env, func(e corev1.EnvVar) bool { return e.Name == name }); k >= 0 {
			env[k].Value = value
		}
	}
}

// apply creates the manifests' objects, as `kubectl apply` would on a
// cluster that has none of them yet, after l's changes.
func apply(ctx context.Context, t *testing.T, cs kubernetes.Interface, l localCluster, objs []runtime.Object) {
	t.Helper()
	for _, o := range objs {
		o, keep := l.mutate(o)
		if !keep {
			continue
		}
		var err error
		switch o := o.(type) {
		case *corev1.Namespace:
			_, err = cs.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ServiceAccount:
			_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ConfigMap:
			_, err = cs.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			_, err = cs.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		case *batchv1.Job:
			_, err = cs.BatchV1().Jobs(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *appsv1.Deployment:
			// Replaces upstream's Deployment of the same name.
			var cur *appsv1.Deployment
			if cur, err = cs.AppsV1().Deployments(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{}); err == nil {
				o.ResourceVersion = cur.ResourceVersion
				_, err = cs.AppsV1().Deployments(o.Namespace).Update(ctx, o, metav1.UpdateOptions{})
			} else if apierrors.IsNotFound(err) {
				_, err = cs.AppsV1().Deployments(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			}
		default:
			err = fmt.Errorf("no apply for %T", o)
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("applying %T: %v", o, err)
		}
	}
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "(no " + path + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
