package bench_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stormbench/stormbench/bench"
	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/cluster/clustertest"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/kubelet"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/measure/churn"
	"github.com/stormbench/stormbench/bench/measure/clientlatency"
	"github.com/stormbench/stormbench/bench/measure/recovery"
	"github.com/stormbench/stormbench/bench/measure/self"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/bench/storm"
	"github.com/stormbench/stormbench/profiles"
)

// The benchmarks share one embedded cluster per test process (or the cluster
// given by STORMBENCH_KUBECONFIG/STORMBENCH_CONTEXT) and one fleet per size;
// every iteration runs one storm on it. Their output feeds benchstat as is:
//
//	go test -run '^$' -bench . -count 5 ./bench/ > new.txt
//	benchstat old.txt new.txt
var (
	benchOnce   sync.Once
	benchTarget *cluster.Target
	benchErr    error
)

// sharedCluster is the embedded cluster of the tests that neither need
// special timing nor break the control plane, and of the benchmarks: each
// cleans up its own run (runProfile checks with assertNothingLeft).
var sharedCluster = &clustertest.Shared{Name: "bench"}

// timingCluster is the shared cluster whose node-lifecycle controller
// reacts within seconds (shortTiming) and taints every NotReady node at
// once (nodeEvictionRate 100), so that downtimes past the grace period and
// evictions fit in a test.
var timingCluster = &clustertest.Shared{Name: "bench-short-timing", Profile: &profiles.Profile{Timing: profiles.Timing{
	NodeMonitorGracePeriod: metav1.Duration{Duration: 12 * time.Second},
	NodeMonitorPeriod:      metav1.Duration{Duration: 2 * time.Second},
	NodeEvictionRate:       100,
}}}

func TestMain(m *testing.M) {
	code := m.Run()
	// On a cluster given by STORMBENCH_KUBECONFIG, remove the benchmarks'
	// fleets; an embedded cluster goes away as a whole.
	if benchTarget != nil && os.Getenv("STORMBENCH_KUBECONFIG") != "" {
		benchRuns.Range(func(k, _ any) bool {
			_ = fleet.Delete(context.Background(), benchTarget.Client, k.(string), 10*time.Minute, nil)
			return true
		})
	}
	os.Exit(clustertest.Finish(code))
}

// benchRuns records the run ids of the fleets the benchmarks created.
var benchRuns sync.Map

func benchEnv(b *testing.B) (*cluster.Target, *cluster.Embedded) {
	b.Helper()
	kc := os.Getenv("STORMBENCH_KUBECONFIG")
	if kc == "" {
		c := sharedCluster.Get(b)
		return c.Target, c.Embedded
	}
	benchOnce.Do(func() {
		benchTarget, benchErr = cluster.Connect(context.Background(), cluster.ConnectOptions{
			Kubeconfig: kc, Context: os.Getenv("STORMBENCH_CONTEXT"), QPS: 500, Burst: 1000})
	})
	if benchErr != nil {
		b.Fatalf("benchmarks need a cluster: %v", benchErr)
	}
	return benchTarget, nil
}

// benchNodes is the fleet size: STORMBENCH_BENCH_NODES, default 100.
func benchNodes() int {
	if n, err := strconv.Atoi(os.Getenv("STORMBENCH_BENCH_NODES")); err == nil && n > 0 {
		return n
	}
	return 100
}

const benchProfile = `
apiVersion: stormbench.io/v1alpha1
kind: StormProfile
metadata: {name: bench}
seed: 1
fleet: {nodes: %d, podsPerNode: 10}
storm:
  kind: %s
  select: {fraction: 0.2}
  downtime: {type: fixed, value: 3s}
  initDuration: 1s
  featureGates: {ChangeContainerStatusOnKubeletRestart: %t}
measurements:
  apiserver: {interval: 1s, baseline: 3s}
  endpointSlices: {}
  recovery: {}
`

// benchRunner returns the target of the benchmarks and a function that
// runs the profile yaml on the fleet of run runID and returns its first
// variant run. The fleet is provisioned by the first run and kept: later
// Ups find every object and only wait for readiness.
func benchRunner(b *testing.B, yaml, runID string) (func() *result.VariantRun, *cluster.Target) {
	target, emb := benchEnv(b)
	p := mustProfile(b, yaml)
	benchRuns.Store(runID, true)
	return func() *result.VariantRun {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		res, err := bench.Run(ctx, bench.Options{Profile: p, RunID: runID, Target: target, Embedded: emb, KeepFleet: true})
		if err != nil {
			b.Fatalf("run %s: %v", runID, err)
		}
		return &res.Variants[0]
	}, target
}

func benchStorm(b *testing.B, kind string, legacy bool) {
	nodes := benchNodes()
	run, _ := benchRunner(b, fmt.Sprintf(benchProfile, nodes, kind, legacy), fmt.Sprintf("bench-%d", nodes))
	var requests, writes, flips, cpuMS, ownCPUMS, restarts float64
	var nodeP99 []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v := run()
		restarts += float64(v.Restarts)
		api := v.Measurement(apiserver.Name)
		if x, ok := api.Value(apiserver.Requests, result.WindowStorm); ok {
			requests += x
		}
		if x, ok := api.Value(apiserver.CPUSeconds, result.WindowStorm, result.LabelComponent, "kube-apiserver"); ok {
			cpuMS += x * 1000
		}
		// All of stormbench's CPU in the storm window (this process: the
		// simulated kubelets, measurements and scrapes).
		if x, ok := v.Measurement(self.Name).Value(self.CPUSeconds, result.WindowStorm); ok {
			ownCPUMS += x * 1000
		}
		es := v.Measurement(churn.Name)
		if x, ok := es.Value(churn.SliceWrites, result.WindowStorm); ok {
			writes += x
		}
		if x, ok := es.Value(churn.SliceReadyFlips, result.WindowStorm, result.LabelDirection, churn.DirectionReadyToNot); ok {
			flips += x
		}
		if h := v.Measurement(recovery.Name).Histogram(recovery.Node, result.WindowStorm); h != nil {
			nodeP99 = append(nodeP99, h.Summary.P99)
		}
	}
	b.StopTimer()
	if restarts == 0 {
		b.Fatal("no restarts")
	}
	b.ReportMetric(requests/restarts, "api-requests/restart")
	b.ReportMetric(writes/restarts, "slice-writes/restart")
	b.ReportMetric(flips/restarts, "ready-flips/restart")
	b.ReportMetric(cpuMS/restarts, "apiserver-cpu-ms/restart")
	b.ReportMetric(ownCPUMS/restarts, "stormbench-cpu-ms/restart")
	var p99 float64
	for _, r := range nodeP99 {
		p99 = max(p99, r)
	}
	b.ReportMetric(p99*1000, "recovery-p99-ms")
}

func BenchmarkKubeletRestartStorm(b *testing.B) {
	for _, g := range []struct {
		name   string
		legacy bool
	}{{"legacy", true}, {"preserve", false}} {
		b.Run(fmt.Sprintf("nodes=%d/gate=%s", benchNodes(), g.name), func(b *testing.B) { benchStorm(b, "kubelet", g.legacy) })
	}
}

func BenchmarkRuntimeRestartStorm(b *testing.B) {
	b.Run(fmt.Sprintf("nodes=%d", benchNodes()), func(b *testing.B) { benchStorm(b, "runtime", false) })
}

func BenchmarkRebootStorm(b *testing.B) {
	b.Run(fmt.Sprintf("nodes=%d", benchNodes()), func(b *testing.B) { benchStorm(b, "reboot", false) })
}

// BenchmarkKubeletReplay measures one simulated kubelet's start-up replay
// (registration, informers, lease, node status, events, Secret/ConfigMap
// watches, TokenRequests, the status manager's first sync) against the real
// API server: time, stormbench's allocations, and requests per replay.
func BenchmarkKubeletReplay(b *testing.B) {
	for _, g := range []struct {
		name   string
		legacy bool
	}{{"legacy", true}, {"preserve", false}} {
		b.Run("gate="+g.name, func(b *testing.B) {
			target, _ := benchEnv(b)
			p := mustProfile(b, `
apiVersion: stormbench.io/v1alpha1
kind: StormProfile
metadata: {name: replay}
fleet: {nodes: 3, podsPerNode: 10}
`)
			const runID = "bench-replay"
			benchRuns.Store(runID, true)
			f, err := fleet.New(target.Client, runID, p.Fleet, nil)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if err := f.Up(ctx); err != nil {
				b.Fatal(err)
			}
			cl := clientlatency.New(clientlatency.Options{})
			sim, err := kubelet.NewSimulator(kubelet.Config{
				Base: target.Config, Harness: target.Client, Wrap: cl.Wrapper(clientlatency.SourceKubelet), RunID: runID,
				Kind: "kubelet", Gates: map[string]bool{"ChangeContainerStatusOnKubeletRestart": g.legacy},
				RecoveryTimeout: time.Minute,
			})
			if err != nil {
				b.Fatal(err)
			}
			node := fleet.NodeName(runID, 0)
			// One restart outside the measurement: the first in a process
			// allocates what later ones reuse (a histogram per new request
			// key in cl, the codecs' type caches), about 5 MB.
			if o := sim.Restart(ctx, storm.Restart{Node: node}); o.Err != nil {
				b.Fatal(o.Err)
			}
			warm := kubeletRequests(b, cl)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if o := sim.Restart(ctx, storm.Restart{Node: node}); o.Err != nil {
					b.Fatal(o.Err)
				}
			}
			b.StopTimer()
			b.ReportMetric((kubeletRequests(b, cl)-warm)/float64(b.N), "requests/replay")
		})
	}
}

// kubeletRequests is the number of requests the simulated kubelets sent
// so far, as cl counted them.
func kubeletRequests(b *testing.B, cl *clientlatency.Recorder) float64 {
	b.Helper()
	m, err := cl.Gather(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	var reqs float64
	for _, v := range m.Values {
		if v.Name == clientlatency.Requests && v.Labels[result.LabelSource] == clientlatency.SourceKubelet {
			reqs += v.Value
		}
	}
	return reqs
}
