package fleet

import (
	"fmt"
	"math"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stormbench/stormbench/profiles"
	"github.com/stormbench/stormbench/workloads"
)

// Plan is the set of objects a fleet consists of.
type Plan struct {
	// RunID is the run label value.
	RunID string
	// Namespace holds every workload object.
	Namespace string
	// Nodes is the node count: KWOK and real.
	Nodes int
	// KWOKNodes are the KWOK nodes the fleet creates (the real ones
	// register themselves).
	KWOKNodes []NodeSpec
	// Objects are the workload objects, in creation order (ConfigMaps,
	// Secrets and Services before the pods that use them).
	Objects []runtime.Object
	// ExpectedPods is how many pods the objects produce on a healthy fleet.
	ExpectedPods int
	// Services counts Services.
	Services int
	// StandalonePods names the bare pods (no controller): when one is
	// evicted it is lost, not replaced.
	StandalonePods []string
	// RealNodes names the nodes that are real kubelets (the fleet's last
	// fleet.realKubelets nodes); they register themselves.
	RealNodes []string
}

// RealNodeType is the type label of real (hollow) kubelet nodes; KWOK
// nodes carry type=kwok.
const RealNodeType = "hollow"

// IsReal reports whether the plan's node name is a real kubelet.
func (p *Plan) IsReal(name string) bool { return slices.Contains(p.RealNodes, name) }

// allowRealNodes lets a pod spec whose probes are all exec probes run on
// real kubelet nodes too: the template's nodeSelector type=kwok becomes a
// required node affinity for type kwok or hollow. Pods with HTTP or TCP
// probes stay on KWOK nodes.
func allowRealNodes(spec *corev1.PodSpec) {
	if workloads.NonExecProbe(spec) != "" || spec.NodeSelector[TypeLabel] != "kwok" {
		return
	}
	delete(spec.NodeSelector, TypeLabel)
	term := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
		Key: TypeLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{"kwok", RealNodeType},
	}}}
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term}}
		return
	}
	// Terms are ORed: the requirement goes into every one of them.
	for i := range na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		t := &na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[i]
		t.MatchExpressions = append(t.MatchExpressions, term.MatchExpressions...)
	}
}

// Namespace returns a run's namespace name.
func Namespace(runID string) string { return "stormbench-" + runID }

// NewPlan renders the workload mix for a fleet: DaemonSets run one pod per
// node, and the remaining nodes × podsPerNode pods are split among the other
// templates by share, in objects of `replicas` pods.
func NewPlan(runID string, f profiles.Fleet) (*Plan, error) {
	p := &Plan{RunID: runID, Namespace: Namespace(runID), Nodes: f.Nodes}
	for i := range f.Nodes - f.RealKubelets {
		p.KWOKNodes = append(p.KWOKNodes, NodeSpec{RunID: runID, Index: i, CPU: f.NodeCPU, Memory: f.NodeMemory, Pods: f.MaxPodsPerNode})
	}
	for i := f.Nodes - f.RealKubelets; i < f.Nodes; i++ {
		p.RealNodes = append(p.RealNodes, NodeName(runID, i))
	}
	infos, total, shareSum, err := p.probeTemplates(f)
	if err != nil {
		return nil, err
	}
	for _, info := range infos {
		copies, replicas, pods := info.copies(f.Nodes, total, shareSum)
		for k := 0; k < copies; k++ {
			objs, err := workloads.Render(workloads.Params{
				Template:          info.share.Template,
				Name:              fmt.Sprintf("%s-%d", info.share.Template, k),
				Namespace:         p.Namespace,
				RunID:             runID,
				Replicas:          replicas,
				TolerationSeconds: *f.TolerationSeconds,
			})
			if err != nil {
				return nil, err
			}
			if f.RealKubelets > 0 {
				for _, o := range objs {
					if spec := workloads.PodSpecOf(o); spec != nil {
						allowRealNodes(spec)
					}
				}
			}
			p.Objects = append(p.Objects, objs...)
		}
		p.ExpectedPods += pods
	}
	p.orderObjects()
	return p, nil
}

// templateInfo is what one workload share's template renders: per node
// (a DaemonSet) or in copies of podsPerCopy pods, with a replicas knob
// (a Deployment or StatefulSet) or not.
type templateInfo struct {
	share        profiles.WorkloadShare
	perNode      bool
	podsPerCopy  int
	replicasKnob bool
}

// probeTemplates renders each workload share's template once to learn its
// shape. total is the pods left for the shares after the DaemonSets' and
// shareSum the shares' sum.
func (p *Plan) probeTemplates(f profiles.Fleet) (infos []templateInfo, total, shareSum int, err error) {
	total = f.Nodes * f.PodsPerNode
	for _, w := range f.Workloads {
		objs, err := workloads.Render(workloads.Params{Template: w.Template, Name: "probe", Namespace: p.Namespace, RunID: p.RunID, Replicas: 1, TolerationSeconds: 300})
		if err != nil {
			return nil, 0, 0, err
		}
		info := templateInfo{share: w}
		for _, o := range objs {
			switch o.(type) {
			case *appsv1.DaemonSet:
				info.perNode = true
			case *appsv1.Deployment, *appsv1.StatefulSet:
				info.replicasKnob = true
				info.podsPerCopy += w.Replicas
			case *corev1.Pod:
				info.podsPerCopy++
			}
		}
		if info.perNode {
			total -= f.Nodes
		} else {
			shareSum += w.Share
		}
		infos = append(infos, info)
	}
	if total < 0 {
		return nil, 0, 0, fmt.Errorf("podsPerNode %d leaves no room for the DaemonSets' pods", f.PodsPerNode)
	}
	return infos, total, shareSum, nil
}

// copies is how many copies of the template to create for its share of
// total pods, with how many replicas each, and the pods they make.
func (info templateInfo) copies(nodes, total, shareSum int) (copies, replicas, pods int) {
	copies, pods, replicas = 1, nodes, info.share.Replicas
	if info.perNode {
		return copies, replicas, pods
	}
	if shareSum == 0 || info.share.Share == 0 || info.podsPerCopy == 0 {
		return 0, replicas, 0
	}
	want := float64(total) * float64(info.share.Share) / float64(shareSum)
	copies = int(math.Round(want / float64(info.podsPerCopy)))
	perCopy := info.podsPerCopy
	if copies == 0 && want > 0 {
		copies = 1
		if info.replicasKnob {
			// A small fleet: one smaller object rather than one full-size
			// object above the target density.
			replicas = max(1, int(math.Round(want)))
			perCopy = replicas
		}
	}
	return copies, replicas, copies * perCopy
}

// orderObjects puts dependencies first: a pod whose ConfigMap does not
// exist yet would wait for it, and a Service created after its pods delays
// its slices. It counts the Services and names the standalone pods.
func (p *Plan) orderObjects() {
	for _, o := range p.Objects {
		switch o := o.(type) {
		case *corev1.Pod:
			p.StandalonePods = append(p.StandalonePods, o.Name)
		case *corev1.Service:
			p.Services++
		}
	}
	slices.SortStableFunc(p.Objects, func(a, b runtime.Object) int { return objectOrder(a) - objectOrder(b) })
}

// objectOrder is where an object goes in a plan: ConfigMaps and Secrets
// (0), Services (1), then what uses them (2).
func objectOrder(o runtime.Object) int {
	switch o.(type) {
	case *corev1.ConfigMap, *corev1.Secret:
		return 0
	case *corev1.Service:
		return 1
	}
	return 2
}
