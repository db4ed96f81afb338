package fleet

import (
	"cmp"
	"fmt"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stormbench/stormbench/bench/cluster"
)

// Ownership and KWOK labels.
const (
	// RunLabel marks every object a run creates; its value is the run id.
	RunLabel = "stormbench.io/run"
	// TypeLabel=kwok marks KWOK nodes, as kwokctl's own node template does.
	TypeLabel = "type"
	// KwokAnnotation marks a node as fake for KWOK.
	KwokAnnotation = "kwok.x-k8s.io/node"
	// KwokTaintKey is the NoSchedule taint that keeps real pods off KWOK nodes.
	KwokTaintKey = "kwok.x-k8s.io/node"
)

// MaxNodes is the largest fleet whose pod CIDRs fit in 10.128.0.0/9 as /24s.
const MaxNodes = 32768

// NodeSpec sizes one KWOK node.
type NodeSpec struct {
	// RunID is the run label value.
	RunID string
	// Index is the node's position in the fleet; it fixes its CIDR, and its
	// name unless Name is set.
	Index int
	// Name, when set, replaces the name NodeName gives the index (the
	// calibration's bystanders).
	Name string
	// Labels are added to the node's labels (and override them).
	Labels map[string]string
	// CPU, Memory and Pods are capacity (and allocatable).
	CPU, Memory string
	// Pods is the pod capacity.
	Pods int
}

// NodeName returns the name of the fleet's i-th node.
func NodeName(runID string, i int) string {
	return fmt.Sprintf("%s-node-%05d", runID, i)
}

// PodCIDR returns the i-th node's pod CIDR: a /24 in 10.128.0.0/9. Without
// its own CIDR, KWOK gives every pod on a node the same IP and EndpointSlices
// stop being realistic.
func PodCIDR(i int) string {
	return fmt.Sprintf("10.%d.%d.0/24", 128+i/256, i%256)
}

// BuildNode constructs a KWOK node: the run label, type=kwok, the KWOK
// management label (up, so KWOK heartbeats it), the fake-node annotation and
// NoSchedule taint, a kwok:// provider ID, its own pod CIDR, and capacity
// sized for the workload.
func BuildNode(s NodeSpec) (*corev1.Node, error) {
	if s.Index < 0 || s.Index >= MaxNodes {
		return nil, fmt.Errorf("node index %d out of range [0, %d)", s.Index, MaxNodes)
	}
	cpu, err := resource.ParseQuantity(s.CPU)
	if err != nil {
		return nil, fmt.Errorf("node cpu %q: %w", s.CPU, err)
	}
	mem, err := resource.ParseQuantity(s.Memory)
	if err != nil {
		return nil, fmt.Errorf("node memory %q: %w", s.Memory, err)
	}
	name := cmp.Or(s.Name, NodeName(s.RunID, s.Index))
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              cpu,
		corev1.ResourceMemory:           mem,
		corev1.ResourcePods:             *resource.NewQuantity(int64(s.Pods), resource.DecimalSI),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	cidr := PodCIDR(s.Index)
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				RunLabel:                         s.RunID,
				TypeLabel:                        "kwok",
				cluster.KubeletLabel:             cluster.KubeletUp,
				corev1.LabelHostname:             name,
				corev1.LabelOSStable:             "linux",
				corev1.LabelArchStable:           "amd64",
				"stormbench.io/index":            strconv.Itoa(s.Index),
				"node-role.kubernetes.io/worker": "",
			},
			Annotations: map[string]string{
				KwokAnnotation:                 "fake",
				"node.alpha.kubernetes.io/ttl": "0",
			},
		},
		Spec: corev1.NodeSpec{
			ProviderID: "kwok://" + name,
			PodCIDR:    cidr,
			PodCIDRs:   []string{cidr},
			Taints: []corev1.Taint{{
				Key:    KwokTaintKey,
				Value:  "fake",
				Effect: corev1.TaintEffectNoSchedule,
			}},
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
		},
	}
	maps.Copy(n.Labels, s.Labels)
	return n, nil
}

// MigratedPluginsAnnotation is the CSINode annotation in which a 1.36
// kubelet lists the in-tree volume plugins migrated to CSI
// (volume/csi/nodeinfomanager setMigrationAnnotation); the value is what
// the hollow kubelet wrote.
const (
	MigratedPluginsAnnotation = "storage.alpha.kubernetes.io/migrated-plugins"
	MigratedPlugins           = "kubernetes.io/aws-ebs,kubernetes.io/azure-disk,kubernetes.io/azure-file,kubernetes.io/cinder,kubernetes.io/gce-pd,kubernetes.io/portworx-volume,kubernetes.io/vsphere-volume"
)

// CSINode is the CSINode a kubelet creates for its node on first start:
// owned by the node, with the migrated-plugins annotation and no drivers.
// The fleet creates one per KWOK node, so that a simulated restart finds
// it as a real kubelet's restart does.
func CSINode(node string, uid types.UID) *storagev1.CSINode {
	return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{
		Name:            node,
		Annotations:     map[string]string{MigratedPluginsAnnotation: MigratedPlugins},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node, UID: uid}},
	}}
}
