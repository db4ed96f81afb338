package workloads

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"

	"github.com/stormbench/stormbench/bench/testutil"
)

const testRunID = "run-20260102-abcd"

// params returns the fixed Params the golden files are rendered with.
func params(template string) Params {
	return Params{
		Template:          template,
		Name:              "sb-" + template,
		Namespace:         "stormbench-test",
		RunID:             testRunID,
		Replicas:          3,
		TolerationSeconds: 120,
	}
}

// kwokTaint is the taint KWOK nodes carry so that only pods meant for them
// land there.
var kwokTaint = corev1.Taint{Key: "kwok.x-k8s.io/node", Value: "fake", Effect: corev1.TaintEffectNoSchedule}

func TestNames(t *testing.T) {
	want := []string{"daemonset", "standalone", "statefulset", "web-exec", "web-http", "web-startup", "web-tcp"}
	if got := Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	for _, n := range want {
		if !Exists(n) {
			t.Errorf("Exists(%q) = false", n)
		}
	}
	for _, n := range []string{"", "_common", "_common.tpl", "web", "web-exec.yaml", "../profiles/quick"} {
		if Exists(n) {
			t.Errorf("Exists(%q) = true", n)
		}
	}
}

func TestRenderGolden(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			got, err := RenderYAML(params(name))
			if err != nil {
				t.Fatal(err)
			}
			testutil.Golden(t, name+".golden.yaml", got)
		})
	}
}

func TestRenderErrors(t *testing.T) {
	if _, err := Render(Params{Template: "nope"}); err == nil || !strings.Contains(err.Error(), `unknown workload template "nope" (have: daemonset, `) {
		t.Errorf("Render(unknown) = %v, want an error listing the templates", err)
	}
	if _, err := RenderYAML(Params{Template: "_common"}); err == nil {
		t.Error("RenderYAML rendered the shared snippets file as a template")
	}
}

// podTemplate returns the pod metadata and spec an object runs, if any.
func podTemplate(obj runtime.Object) (*metav1.ObjectMeta, *corev1.PodSpec, bool) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return &o.ObjectMeta, &o.Spec, true
	case *appsv1.Deployment:
		return &o.Spec.Template.ObjectMeta, &o.Spec.Template.Spec, true
	case *appsv1.StatefulSet:
		return &o.Spec.Template.ObjectMeta, &o.Spec.Template.Spec, true
	case *appsv1.DaemonSet:
		return &o.Spec.Template.ObjectMeta, &o.Spec.Template.Spec, true
	}
	return nil, nil, false
}

func renderAll(t *testing.T) map[string][]runtime.Object {
	t.Helper()
	out := map[string][]runtime.Object{}
	for _, name := range Names() {
		objs, err := Render(params(name))
		if err != nil {
			t.Fatalf("Render(%s): %v", name, err)
		}
		out[name] = objs
	}
	return out
}

func TestRenderDecodes(t *testing.T) {
	for name, objs := range renderAll(t) {
		t.Run(name, func(t *testing.T) {
			if len(objs) == 0 {
				t.Fatal("no objects")
			}
			pods := 0
			for _, obj := range objs {
				m, err := metaOf(obj)
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("%T %s", obj, m.GetName())
				// Ownership (issue 7): stormbench only touches what
				// carries its run label.
				if m.GetLabels()["stormbench.io/run"] != testRunID {
					t.Errorf("%s lacks the run label: %v", what, m.GetLabels())
				}
				if m.GetNamespace() != "stormbench-test" {
					t.Errorf("%s is in namespace %q", what, m.GetNamespace())
				}
				if !strings.HasPrefix(m.GetName(), "sb-"+name) {
					t.Errorf("%s is not named after the Name prefix", what)
				}
				meta, spec, ok := podTemplate(obj)
				if !ok {
					continue
				}
				pods++
				checkPodTemplate(t, what, meta, spec)
			}
			if pods != 1 {
				t.Errorf("template runs %d pod templates, want 1", pods)
			}
		})
	}
}

// TestRenderStrict decodes every rendered document strictly. Render's
// decoder drops unknown and duplicate fields silently, so a typo such as
// "readinesProbe" in a template would vanish without this check.
func TestRenderStrict(t *testing.T) {
	strict := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	for _, name := range Names() {
		data, err := RenderYAML(params(name))
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for i := 0; ; i++ {
			doc, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: splitting documents: %v", name, err)
			}
			if len(bytes.TrimSpace(stripComments(doc))) == 0 {
				continue
			}
			if _, _, err := strict.Decode(doc, nil, nil); err != nil {
				t.Errorf("%s: document %d does not decode strictly: %v", name, i, err)
			}
		}
	}
}

func metaOf(obj runtime.Object) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no object metadata", obj)
	}
	return m, nil
}

func checkPodTemplate(t *testing.T, what string, meta *metav1.ObjectMeta, spec *corev1.PodSpec) {
	t.Helper()
	if meta.Labels["stormbench.io/run"] != testRunID {
		t.Errorf("%s: pod template lacks the run label: %v", what, meta.Labels)
	}
	tolerated := false
	for _, tol := range spec.Tolerations {
		if tol.ToleratesTaint(klog.Background(), &kwokTaint, false) {
			tolerated = true
		}
	}
	if !tolerated {
		t.Errorf("%s: pods do not tolerate the KWOK taint %v: %v", what, kwokTaint, spec.Tolerations)
	}
	// Pods must land on this run's KWOK nodes only.
	if spec.NodeSelector["type"] != "kwok" || spec.NodeSelector["stormbench.io/run"] != testRunID {
		t.Errorf("%s: nodeSelector %v does not pin pods to the run's KWOK nodes", what, spec.NodeSelector)
	}
	for _, c := range spec.Containers {
		if c.ReadinessProbe == nil {
			t.Errorf("%s: container %s has no readiness probe", what, c.Name)
		}
	}
	// The controller-managed templates and the bare pod set the
	// not-ready/unreachable tolerations the profile asks for; the DaemonSet
	// controller adds its own (tolerate forever) to DaemonSet pods.
	if !strings.HasPrefix(what, "*v1.DaemonSet") {
		for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
			found := false
			for _, tol := range spec.Tolerations {
				if tol.Key == key && tol.Effect == corev1.TaintEffectNoExecute && tol.TolerationSeconds != nil && *tol.TolerationSeconds == 120 {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: no %s NoExecute toleration of 120s: %v", what, key, spec.Tolerations)
			}
		}
	}
}

func TestRenderSelectorsMatch(t *testing.T) {
	// A controller whose selector misses its template's labels is rejected
	// by the API server; a Service or PDB whose selector misses the pods
	// measures nothing.
	for name, objs := range renderAll(t) {
		var podLabels map[string]string
		for _, obj := range objs {
			if meta, _, ok := podTemplate(obj); ok {
				podLabels = meta.Labels
			}
		}
		for _, obj := range objs {
			var sel map[string]string
			switch o := obj.(type) {
			case *appsv1.Deployment:
				sel = o.Spec.Selector.MatchLabels
			case *appsv1.StatefulSet:
				sel = o.Spec.Selector.MatchLabels
			case *appsv1.DaemonSet:
				sel = o.Spec.Selector.MatchLabels
			case *corev1.Service:
				sel = o.Spec.Selector
			case *policyv1.PodDisruptionBudget:
				sel = o.Spec.Selector.MatchLabels
			default:
				continue
			}
			if len(sel) == 0 {
				t.Errorf("%s: %T has an empty selector", name, obj)
			}
			for k, v := range sel {
				if podLabels[k] != v {
					t.Errorf("%s: %T selects %s=%s, which its pods (%v) lack", name, obj, k, v, podLabels)
				}
			}
		}
	}
}

// TestMix checks that the workload mix covers every behaviour the
// simulation models: each probe kind (exec probes fail during a runtime
// restart, HTTP and TCP ones do not), liveness restarts, each controller
// kind (and a bare pod, which is lost on eviction), the volumes the kubelet
// re-watches or re-requests on restart, memory-backed emptyDirs (lost on
// reboot) and a PodDisruptionBudget (honoured by a planned drain).
func TestMix(t *testing.T) {
	type feature struct {
		name string
		has  func(obj runtime.Object, spec *corev1.PodSpec) bool
	}
	anyContainer := func(spec *corev1.PodSpec, f func(c corev1.Container) bool) bool {
		return spec != nil && slices.ContainsFunc(spec.Containers, f)
	}
	anyVolume := func(spec *corev1.PodSpec, f func(v corev1.Volume) bool) bool {
		return spec != nil && slices.ContainsFunc(spec.Volumes, f)
	}
	features := []feature{
		{"exec readiness probe", func(_ runtime.Object, s *corev1.PodSpec) bool {
			return anyContainer(s, func(c corev1.Container) bool { return c.ReadinessProbe != nil && c.ReadinessProbe.Exec != nil })
		}},
		{"HTTP readiness probe", func(_ runtime.Object, s *corev1.PodSpec) bool {
			return anyContainer(s, func(c corev1.Container) bool { return c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil })
		}},
		{"TCP readiness probe", func(_ runtime.Object, s *corev1.PodSpec) bool {
			return anyContainer(s, func(c corev1.Container) bool { return c.ReadinessProbe != nil && c.ReadinessProbe.TCPSocket != nil })
		}},
		{"exec liveness probe", func(_ runtime.Object, s *corev1.PodSpec) bool {
			return anyContainer(s, func(c corev1.Container) bool { return c.LivenessProbe != nil && c.LivenessProbe.Exec != nil })
		}},
		{"liveness probe", func(_ runtime.Object, s *corev1.PodSpec) bool {
			return anyContainer(s, func(c corev1.Container) bool { return c.LivenessProbe != nil })
		}},
		{"init container", func(_ runtime.Object, s *corev1.PodSpec) bool { return s != nil && len(s.InitContainers) > 0 }},
		{"Deployment", func(o runtime.Object, _ *corev1.PodSpec) bool { _, ok := o.(*appsv1.Deployment); return ok }},
		{"StatefulSet", func(o runtime.Object, _ *corev1.PodSpec) bool { _, ok := o.(*appsv1.StatefulSet); return ok }},
		{"DaemonSet", func(o runtime.Object, _ *corev1.PodSpec) bool { _, ok := o.(*appsv1.DaemonSet); return ok }},
		{"bare Pod", func(o runtime.Object, _ *corev1.PodSpec) bool {
			p, ok := o.(*corev1.Pod)
			return ok && len(p.OwnerReferences) == 0
		}},
		{"Service with a cluster IP", func(o runtime.Object, _ *corev1.PodSpec) bool {
			s, ok := o.(*corev1.Service)
			return ok && s.Spec.ClusterIP != corev1.ClusterIPNone
		}},
		{"headless Service", func(o runtime.Object, _ *corev1.PodSpec) bool {
			s, ok := o.(*corev1.Service)
			return ok && s.Spec.ClusterIP == corev1.ClusterIPNone
		}},
		{"ConfigMap volume", func(_ runtime.Object, s *corev1.PodSpec) bool {
			return anyVolume(s, func(v corev1.Volume) bool { return v.ConfigMap != nil })
		}},
		{"Secret volume", func(_ runtime.Object, s *corev1.PodSpec) bool {
			return anyVolume(s, func(v corev1.Volume) bool { return v.Secret != nil })
		}},
		{"projected serviceAccountToken", func(_ runtime.Object, s *corev1.PodSpec) bool {
			return anyVolume(s, func(v corev1.Volume) bool {
				return v.Projected != nil && slices.ContainsFunc(v.Projected.Sources, func(p corev1.VolumeProjection) bool { return p.ServiceAccountToken != nil })
			})
		}},
		{"memory emptyDir", func(_ runtime.Object, s *corev1.PodSpec) bool {
			return anyVolume(s, func(v corev1.Volume) bool {
				return v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumMemory
			})
		}},
		{"PodDisruptionBudget", func(o runtime.Object, _ *corev1.PodSpec) bool { _, ok := o.(*policyv1.PodDisruptionBudget); return ok }},
	}
	all := renderAll(t)
	for _, f := range features {
		t.Run(f.name, func(t *testing.T) {
			var in []string
			for _, name := range Names() {
				for _, obj := range all[name] {
					_, spec, _ := podTemplate(obj)
					if f.has(obj, spec) {
						in = append(in, name)
						break
					}
				}
			}
			if len(in) == 0 {
				t.Errorf("no workload template has a %s", f.name)
			}
		})
	}
}

func TestRenderVolumesResolve(t *testing.T) {
	// Every ConfigMap and Secret a pod mounts is rendered by the same
	// template, so the kubelet's per-object watches have something to watch
	// and pods can start.
	for name, objs := range renderAll(t) {
		have := map[string]bool{}
		for _, obj := range objs {
			switch o := obj.(type) {
			case *corev1.ConfigMap:
				have["ConfigMap/"+o.Name] = true
			case *corev1.Secret:
				have["Secret/"+o.Name] = true
			}
		}
		for _, obj := range objs {
			_, spec, ok := podTemplate(obj)
			if !ok {
				continue
			}
			mounted := map[string]bool{}
			for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
				for _, m := range c.VolumeMounts {
					mounted[m.Name] = true
				}
			}
			for _, v := range spec.Volumes {
				if !mounted[v.Name] {
					t.Errorf("%s: volume %s is not mounted", name, v.Name)
				}
				if v.ConfigMap != nil && !have["ConfigMap/"+v.ConfigMap.Name] {
					t.Errorf("%s: mounts ConfigMap %s, which it does not create", name, v.ConfigMap.Name)
				}
				if v.Secret != nil && !have["Secret/"+v.Secret.SecretName] {
					t.Errorf("%s: mounts Secret %s, which it does not create", name, v.Secret.SecretName)
				}
			}
		}
	}
}

func TestRenderParams(t *testing.T) {
	// Replicas and the toleration reach the objects.
	p := params("web-http")
	p.Replicas, p.TolerationSeconds = 17, 42
	objs, err := Render(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		d, ok := obj.(*appsv1.Deployment)
		if !ok {
			continue
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 17 {
			t.Errorf("replicas %v, want 17", d.Spec.Replicas)
		}
		for _, tol := range d.Spec.Template.Spec.Tolerations {
			if tol.Effect == corev1.TaintEffectNoExecute && (tol.TolerationSeconds == nil || *tol.TolerationSeconds != 42) {
				t.Errorf("toleration %v, want 42s", tol)
			}
		}
		return
	}
	t.Error("web-http rendered no Deployment")
}

func TestRunsOnRealKubelets(t *testing.T) {
	for name, want := range map[string]bool{
		"web-exec":    true,  // exec readiness and liveness probes
		"web-startup": true,  // exec startup, readiness and liveness probes
		"statefulset": true,  // exec probes
		"web-http":    false, // HTTP probes dial fake sandbox IPs
		"web-tcp":     false,
		"standalone":  false, // a TCP probe
		"daemonset":   false, // an HTTP probe
	} {
		got, err := RunsOnRealKubelets(name)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("RunsOnRealKubelets(%s) = %v, want %v", name, got, want)
		}
	}
	spec := &corev1.PodSpec{Containers: []corev1.Container{
		{Name: "a", ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}},
		{Name: "b", LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/"}}}},
	}}
	if got := NonExecProbe(spec); got != "containers[1].livenessProbe" {
		t.Errorf("NonExecProbe = %q", got)
	}
}
