package fleet

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
)

// benchFleet is a steady fleet of n nodes × 10 pods, every one Ready, one
// pod in ten standalone and one of those lost, held as the readiness
// wait's caches hold it, with the tally fed from the same events.
type benchFleet struct {
	rig *tallyRig
	// ready and notReady are each pod as Ready and as marked not Ready by
	// the node-lifecycle controller; nodes are the nodes (a heartbeat is
	// an update that changes nothing readiness reads).
	ready, notReady []*corev1.Pod
	nodes           []*corev1.Node
}

var benchSizes = []int{1000, 5000, 10000}

func newBenchFleet(b *testing.B, nodes int) *benchFleet {
	plan := &Plan{Namespace: "ns", Nodes: nodes, ExpectedPods: 10 * nodes}
	f := &benchFleet{}
	for i := range nodes {
		f.nodes = append(f.nodes, node(NodeName("bench", i), true))
	}
	for i := range 10 * nodes {
		p := pod(fmt.Sprintf("pod-%06d", i), NodeName("bench", i/10), true)
		if i%10 == 0 {
			plan.StandalonePods = append(plan.StandalonePods, p.Name)
		}
		f.ready = append(f.ready, p)
		f.notReady = append(f.notReady, pod(p.Name, p.Spec.NodeName, false))
	}
	f.rig = newTallyRig(b, plan)
	for _, n := range f.nodes {
		f.rig.nodes.set(n)
	}
	for _, p := range f.ready[1:] { // pod 0, standalone, is lost
		f.rig.pods.set(p)
	}
	return f
}

// BenchmarkReadinessRead is one read of the fleet's readiness, as the
// readiness wait does every second: a recount of every node and pod in the
// caches (impl=recount, before the tally), or the tally's counters
// (impl=tally).
func BenchmarkReadinessRead(b *testing.B) {
	for _, n := range benchSizes {
		f := newBenchFleet(b, n)
		now := f.rig.now
		for _, impl := range []string{"recount", "tally"} {
			b.Run(fmt.Sprintf("nodes=%d/impl=%s", n, impl), func(b *testing.B) {
				b.ReportAllocs()
				var r *Readiness
				for b.Loop() {
					var stale []*corev1.Pod
					if impl == "recount" {
						r, stale = recount(f.rig.plan, f.rig.nodes.store, f.rig.pods.store, now)
					} else {
						r = f.rig.tally.read(f.rig.plan, staleCandidates(f.rig.plan, now, &stale))
					}
					_ = stale
				}
				if r.ReadyPods != 10*n-1 || r.LostPods != 1 || r.ReadyNodes != n {
					b.Fatalf("read %+v", *r)
				}
			})
		}
	}
}

// BenchmarkReadinessEvent is the cost of one informer event in the
// readiness wait's caches: a pod marked not Ready, the same pod Ready again,
// and a node heartbeat, in turn over the fleet. impl=store is the cache's
// own update, all an event cost before the tally; impl=tally adds the
// tally's handler, which is what keeping the counts costs.
func BenchmarkReadinessEvent(b *testing.B) {
	for _, n := range benchSizes {
		f := newBenchFleet(b, n)
		for _, impl := range []string{"store", "tally"} {
			b.Run(fmt.Sprintf("nodes=%d/impl=%s", n, impl), func(b *testing.B) {
				pods, nodes := f.rig.pods, f.rig.nodes
				h := handlers(f.rig.tally.setPod, f.rig.tally.deletePod)
				nh := handlers(f.rig.tally.setNode, f.rig.tally.deleteNode)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					p := 1 + (i/3)%(len(f.ready)-1)
					var old, obj any
					var store cache.Store
					var handler cache.ResourceEventHandler
					switch i % 3 {
					case 0:
						old, obj, store, handler = f.ready[p], f.notReady[p], pods.store, h
					case 1:
						old, obj, store, handler = f.notReady[p], f.ready[p], pods.store, h
					default:
						nd := f.nodes[(i/3)%len(f.nodes)]
						old, obj, store, handler = nd, nd, nodes.store, nh
					}
					_ = store.Update(obj)
					if impl == "tally" {
						handler.OnUpdate(old, obj)
					}
					i++
				}
				b.StopTimer()
				// Leave the fleet steady for the next run.
				for p := range f.ready[1:] {
					f.rig.pods.set(f.ready[p+1])
				}
				if r := f.rig.tally.read(f.rig.plan, nil); impl == "tally" && (r.ReadyPods != 10*n-1 || r.ReadyNodes != n) {
					b.Fatalf("after the events: %+v", *r)
				}
			})
		}
	}
}

// kwokNode is one of the fleet's KWOK nodes as the node cache holds it
// before SlimNode: what BuildNode creates, with the status KWOK's node
// stages write (conditions with heartbeats, addresses, node info, daemon
// endpoint; kwok's default node-initialize and node-heartbeat stages).
// Synthetic: it is not read from a cluster, and managedFields are already
// dropped.
func kwokNode(b *testing.B) *corev1.Node {
	n, err := BuildNode(NodeSpec{RunID: "fleet-5k", Index: 4242, CPU: "32", Memory: "256Gi", Pods: 110})
	if err != nil {
		b.Fatal(err)
	}
	hb := metav1.NewTime(time.Unix(1_780_000_000, 0))
	for _, c := range []struct {
		t      corev1.NodeConditionType
		s      corev1.ConditionStatus
		reason string
	}{
		{corev1.NodeReady, corev1.ConditionTrue, "KubeletReady"},
		{corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"},
		{corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"},
		{corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID"},
		{corev1.NodeNetworkUnavailable, corev1.ConditionFalse, "RouteCreated"},
	} {
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: c.t, Status: c.s, Reason: c.reason,
			Message: "kubelet is posting ready status", LastHeartbeatTime: hb, LastTransitionTime: hb})
	}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.144.146.1"}, {Type: corev1.NodeHostName, Address: n.Name}}
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = 10250
	n.Status.NodeInfo = corev1.NodeSystemInfo{Architecture: "amd64", OperatingSystem: "linux", KubeletVersion: "fake",
		KubeProxyVersion: "fake", ContainerRuntimeVersion: "kwok-v0.8.0", OSImage: "kwok", KernelVersion: "kwok",
		MachineID: "", SystemUUID: "", BootID: ""}
	n.Status.Phase = corev1.NodeRunning
	n.ResourceVersion, n.UID = "123456789", "6f1c2a9e-1d2b-4c3d-8e4f-5a6b7c8d9e0f"
	return n
}

// BenchmarkNodeCacheBytes reports the heap a cache of the fleet's nodes
// holds per node, managedFields dropped (the node cache before SlimNode)
// and slim. Memory, not time, is the figure: run with -benchtime=1x.
func BenchmarkNodeCacheBytes(b *testing.B) {
	raw, err := json.Marshal(kwokNode(b))
	if err != nil {
		b.Fatal(err)
	}
	benchCacheBytes[corev1.Node](b, raw, SlimNode, "heapB/node")
}

// BenchmarkPodEventDecode is the rest of a pod event's cost in the fleet's
// pod caches: decoding fleet-5k's Running pod (testdata/fleet-pod.json,
// managedFields included) as the harness client receives it, JSON today or
// protobuf, and SlimPod. Beside BenchmarkReadinessEvent it shows how small
// the tally's share of an event is.
func BenchmarkPodEventDecode(b *testing.B) {
	pod := fleetPod(b)
	js, err := k8sruntime.Encode(scheme.Codecs.LegacyCodec(corev1.SchemeGroupVersion), pod)
	if err != nil {
		b.Fatal(err)
	}
	info, ok := k8sruntime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), k8sruntime.ContentTypeProtobuf)
	if !ok {
		b.Fatal("no protobuf serializer")
	}
	pb, err := k8sruntime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion), pod)
	if err != nil {
		b.Fatal(err)
	}
	dec := scheme.Codecs.UniversalDeserializer()
	for _, bc := range []struct {
		name string
		data []byte
	}{{"json", js}, {"protobuf", pb}} {
		b.Run("codec="+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				obj, _, err := dec.Decode(bc.data, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := SlimPod(obj); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(bc.data)), "wireB")
		})
	}
}
