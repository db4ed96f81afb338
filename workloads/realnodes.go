package workloads

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// PodSpecOf returns the pod spec an object runs (a pod's, or a workload
// controller's template), or nil.
func PodSpecOf(o runtime.Object) *corev1.PodSpec {
	switch v := o.(type) {
	case *corev1.Pod:
		return &v.Spec
	case *appsv1.Deployment:
		return &v.Spec.Template.Spec
	case *appsv1.StatefulSet:
		return &v.Spec.Template.Spec
	case *appsv1.DaemonSet:
		return &v.Spec.Template.Spec
	}
	return nil
}

// NonExecProbe returns the path of the first HTTP, TCP or gRPC probe in a
// pod spec ("containers[0].readinessProbe"), or "" when every probe is an
// exec probe (or there is none). A real kubelet on a fake runtime answers
// exec probes only: the others would dial sandbox IPs nothing listens on.
func NonExecProbe(spec *corev1.PodSpec) string {
	check := func(kind string, cs []corev1.Container) string {
		for i, c := range cs {
			for _, p := range []struct {
				name  string
				probe *corev1.Probe
			}{{"readinessProbe", c.ReadinessProbe}, {"livenessProbe", c.LivenessProbe}, {"startupProbe", c.StartupProbe}} {
				if p.probe != nil && p.probe.Exec == nil {
					return kind + "[" + strconv.Itoa(i) + "]." + p.name
				}
			}
		}
		return ""
	}
	if p := check("initContainers", spec.InitContainers); p != "" {
		return p
	}
	return check("containers", spec.Containers)
}

// RunsOnRealKubelets reports whether a template's pods can run on real
// (hollow) kubelets: every pod it makes probes with exec only.
func RunsOnRealKubelets(template string) (bool, error) {
	objs, err := Render(Params{Template: template, Name: "probe", Namespace: "probe", RunID: "probe", Replicas: 1, TolerationSeconds: 300})
	if err != nil {
		return false, err
	}
	pods := 0
	for _, o := range objs {
		if spec := PodSpecOf(o); spec != nil {
			pods++
			if NonExecProbe(spec) != "" {
				return false, nil
			}
		}
	}
	return pods > 0, nil
}
