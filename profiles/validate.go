package profiles

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/workloads"
)

// Sanity bounds that catch typos such as "30m" for "30s".
const (
	maxNodes     = 32768
	maxDowntime  = time.Hour
	maxPodsDense = 1000
)

// DefaultWorkloads is the mix used when a profile names none.
var DefaultWorkloads = []WorkloadShare{
	{Template: "web-exec", Share: 20, Replicas: 10},
	{Template: "web-startup", Share: 5, Replicas: 10},
	{Template: "web-http", Share: 30, Replicas: 10},
	{Template: "web-tcp", Share: 25, Replicas: 10},
	{Template: "statefulset", Share: 10, Replicas: 5},
	{Template: "standalone", Share: 10, Replicas: 1},
	{Template: "daemonset"},
}

// SetDefaults fills unset fields with their documented defaults. A
// kubernetes.version that names a supported version is written as its
// release tag ("1.37" becomes "v1.37.2"); an unset one stays unset (the
// default).
func SetDefaults(p *Profile) {
	if p.Kubernetes.Version != "" {
		if v, err := kubeversion.Parse(p.Kubernetes.Version); err == nil {
			p.Kubernetes.Version = v.String()
		}
	}
	for i := range p.Variants {
		if k := p.Variants[i].Kubernetes; k != nil && k.Version != "" {
			if v, err := kubeversion.Parse(k.Version); err == nil {
				k.Version = v.String()
			}
		}
	}
	f := &p.Fleet
	if len(f.Workloads) == 0 {
		f.Workloads = append([]WorkloadShare(nil), DefaultWorkloads...)
	}
	for i := range f.Workloads {
		f.Workloads[i].Replicas = cmp.Or(f.Workloads[i].Replicas, 10)
	}
	f.NodeCPU = cmp.Or(f.NodeCPU, "32")
	f.NodeMemory = cmp.Or(f.NodeMemory, "256Gi")
	f.MaxPodsPerNode = cmp.Or(f.MaxPodsPerNode, f.PodsPerNode*2+10)
	if f.TolerationSeconds == nil {
		f.TolerationSeconds = ptr.To[int64](300)
	}
	f.CreateParallelism = cmp.Or(f.CreateParallelism, DefaultCreateParallelism)
	f.QPS = cmp.Or(f.QPS, 500)
	f.Burst = cmp.Or(f.Burst, 1000)
	t := &p.Timing
	t.HeartbeatFactor = cmp.Or(t.HeartbeatFactor, 1)
	t.NodeLeaseDurationSeconds = cmp.Or(t.NodeLeaseDurationSeconds, 40)
	setDur(&f.ReadyTimeout, 10*time.Minute)
	setDur(&t.NodeStatusUpdateFrequency, 10*time.Second)
	setDur(&t.NodeMonitorGracePeriod, 50*time.Second)
	setDur(&t.NodeMonitorPeriod, 5*time.Second)
	c := &p.ControlPlane
	c.APF = cmp.Or(c.APF, APFRealistic)
	c.APIServerMetrics = cmp.Or(c.APIServerMetrics, APIServerMetricsLean)
	c.ControllerQPS = cmp.Or(c.ControllerQPS, 100)
	c.ControllerBurst = cmp.Or(c.ControllerBurst, 200)
	if s := p.Storm; s != nil {
		s.Downtime.Type = cmp.Or(s.Downtime.Type, "fixed")
		setDur(&s.RecoveryTimeout, 10*time.Minute)
	}
	p.Repetitions.Count = cmp.Or(p.Repetitions.Count, 1)
	if m := p.Measurements.APIServer; m != nil {
		setDur(&m.Interval, time.Second)
		setDur(&m.Baseline, 10*time.Second)
		m.MaxInFlight = cmp.Or(m.MaxInFlight, 4)
	}
}

func setDur(d *metav1.Duration, def time.Duration) { d.Duration = cmp.Or(d.Duration, def) }

// Validate returns every problem with a defaulted profile, with field paths.
func Validate(p *Profile) field.ErrorList {
	var errs field.ErrorList
	if p.APIVersion != APIVersion {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), p.APIVersion, []string{APIVersion}))
	}
	if p.Kind != Kind {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), p.Kind, []string{Kind}))
	}
	mp := field.NewPath("metadata", "name")
	if p.Metadata.Name == "" {
		errs = append(errs, field.Required(mp, ""))
	} else {
		for _, msg := range validation.IsDNS1123Label(p.Metadata.Name) {
			errs = append(errs, field.Invalid(mp, p.Metadata.Name, msg))
		}
	}
	errs = append(errs, validateKubernetes(p)...)
	errs = append(errs, validateFleet(&p.Fleet, field.NewPath("fleet"))...)
	errs = append(errs, validateTiming(&p.Timing, field.NewPath("timing"))...)
	errs = append(errs, validateControlPlane(&p.ControlPlane, field.NewPath("controlPlane"))...)
	if p.Storm != nil {
		errs = append(errs, validateStorm(p.Storm, p.Fleet.Nodes, field.NewPath("storm"))...)
	}
	vp := field.NewPath("variants")
	seen := map[string]bool{}
	for i, v := range p.Variants {
		ip := vp.Index(i)
		if v.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else if err := result.CheckVariantName(v.Name); err != nil {
			errs = append(errs, field.Invalid(ip.Child("name"), truncate(v.Name), err.Error()))
		} else if seen[v.Name] {
			errs = append(errs, field.Duplicate(ip.Child("name"), v.Name))
		}
		seen[v.Name] = true
		errs = append(errs, validateGates(v.FeatureGates, ip.Child("featureGates"))...)
	}
	if len(p.Variants) > 0 && p.Storm == nil {
		errs = append(errs, field.Required(field.NewPath("storm"), "variants need a storm"))
	}
	if n := p.Repetitions.Count; n < 1 || n > 100 {
		errs = append(errs, field.Invalid(field.NewPath("repetitions"), n, "must be between 1 and 100"))
	}
	switch p.Repetitions.Seeds {
	case "", SeedsFixed, SeedsVary:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("repetitions", "seeds"), truncate(p.Repetitions.Seeds), []string{SeedsFixed, SeedsVary}))
	}
	if m := p.Measurements.EndpointSlices; m != nil && (m.Watchers < 0 || m.Watchers > 10000) {
		errs = append(errs, field.Invalid(field.NewPath("measurements", "endpointSlices", "watchers"), m.Watchers, "must be between 0 and 10000"))
	}
	if m := p.Measurements.APIServer; m != nil {
		ap := field.NewPath("measurements", "apiserver")
		if m.Interval.Duration < 100*time.Millisecond {
			errs = append(errs, field.Invalid(ap.Child("interval"), m.Interval.Duration.String(), "must be at least 100ms"))
		}
		if m.MaxInFlight < 1 || m.MaxInFlight > 16 {
			errs = append(errs, field.Invalid(ap.Child("maxInFlight"), m.MaxInFlight, "must be between 1 and 16"))
		}
		if rs := m.RestoreSettle; rs != nil && rs.Window.Duration != 0 && rs.Window.Duration < 2*time.Second {
			errs = append(errs, field.Invalid(ap.Child("restoreSettle", "window"), rs.Window.Duration.String(), "must be at least 2s"))
		}
		if rs := m.RestoreSettle; rs != nil && rs.Windows != 0 && (rs.Windows < 2 || rs.Windows > 10) {
			errs = append(errs, field.Invalid(ap.Child("restoreSettle", "windows"), rs.Windows, "must be between 2 and 10"))
		}
	}
	errs = append(errs, validateCIGates(p.Gates, field.NewPath("gates"))...)
	return errs
}

// MaxRealKubelets bounds fleet.realKubelets: each one is a kubelet process
// and a runtime process on this machine.
const MaxRealKubelets = 64

// validateRealKubelets checks fleet.realKubelets: within the fleet, and at
// least one workload of the mix that a real kubelet on a fake runtime can
// run (exec probes only).
func validateRealKubelets(f *Fleet, fp *field.Path) field.ErrorList {
	if b := f.RealKubeletBackend; b != "" && b != RealKubeletHollow && b != RealKubeletContainerd {
		return field.ErrorList{field.NotSupported(fp.Child("realKubeletBackend"), b, []string{RealKubeletHollow, RealKubeletContainerd})}
	}
	if f.RealKubelets == 0 {
		return nil
	}
	rp := fp.Child("realKubelets")
	if f.RealKubelets < 0 || f.RealKubelets > MaxRealKubelets || f.RealKubelets > f.Nodes {
		return field.ErrorList{field.Invalid(rp, f.RealKubelets, fmt.Sprintf("must be between 0 and the fleet's nodes, at most %d", MaxRealKubelets))}
	}
	var runnable []string
	for _, w := range f.Workloads {
		if w.Share == 0 || !workloads.Exists(w.Template) {
			continue
		}
		if ok, err := workloads.RunsOnRealKubelets(w.Template); err == nil && ok {
			runnable = append(runnable, w.Template)
		}
	}
	if len(runnable) == 0 {
		return field.ErrorList{field.Invalid(rp, f.RealKubelets, "no workload of fleet.workloads can run on a real kubelet: each has HTTP or TCP probes, which a fake runtime cannot answer (add web-exec or statefulset)")}
	}
	return nil
}

// validateSteadyWatches checks fleet.steadyWatches: at least one component,
// and at least one KWOK node to hold the watches for.
func validateSteadyWatches(f *Fleet, fp *field.Path) field.ErrorList {
	sw := f.SteadyWatches
	if sw == nil {
		return nil
	}
	sp := fp.Child("steadyWatches")
	var errs field.ErrorList
	if !sw.Kubelet && !sw.KubeProxy {
		errs = append(errs, field.Required(sp, "set kubelet, kubeProxy or both, or leave steadyWatches out"))
	}
	if f.Nodes > 0 && f.RealKubelets >= f.Nodes {
		errs = append(errs, field.Invalid(sp, "set", "every node is a real kubelet (fleet.realKubelets), and real kubelets hold their own watches: no KWOK node is left to hold steady watches for"))
	}
	return errs
}

func validateFleet(f *Fleet, fp *field.Path) field.ErrorList {
	var errs field.ErrorList
	if f.Nodes <= 0 || f.Nodes > maxNodes {
		errs = append(errs, field.Invalid(fp.Child("nodes"), f.Nodes, fmt.Sprintf("must be between 1 and %d", maxNodes)))
	}
	if f.PodsPerNode <= 0 || f.PodsPerNode > maxPodsDense {
		errs = append(errs, field.Invalid(fp.Child("podsPerNode"), f.PodsPerNode, fmt.Sprintf("must be between 1 and %d", maxPodsDense)))
	}
	if f.MaxPodsPerNode < f.PodsPerNode {
		errs = append(errs, field.Invalid(fp.Child("maxPodsPerNode"), f.MaxPodsPerNode, "must be at least podsPerNode"))
	}
	known := workloads.Names()
	wp := fp.Child("workloads")
	seen := map[string]bool{}
	for i, w := range f.Workloads {
		ip := wp.Index(i)
		if !workloads.Exists(w.Template) {
			errs = append(errs, field.NotSupported(ip.Child("template"), w.Template, known))
		} else if seen[w.Template] {
			errs = append(errs, field.Duplicate(ip.Child("template"), w.Template))
		}
		seen[w.Template] = true
		if w.Share < 0 {
			errs = append(errs, field.Invalid(ip.Child("share"), w.Share, "must not be negative"))
		}
		if w.Replicas < 1 || w.Replicas > 10000 {
			errs = append(errs, field.Invalid(ip.Child("replicas"), w.Replicas, "must be between 1 and 10000"))
		}
	}
	errs = append(errs, validateRealKubelets(f, fp)...)
	errs = append(errs, validateSteadyWatches(f, fp)...)
	for _, q := range []struct{ name, val string }{{"nodeCPU", f.NodeCPU}, {"nodeMemory", f.NodeMemory}} {
		if qv, err := resource.ParseQuantity(q.val); err != nil {
			errs = append(errs, field.Invalid(fp.Child(q.name), truncate(q.val), "must be a quantity such as 32, 500m, 256Gi"))
		} else if qv.Sign() <= 0 {
			errs = append(errs, field.Invalid(fp.Child(q.name), q.val, "must be positive"))
		}
	}
	if f.TolerationSeconds != nil && *f.TolerationSeconds < 0 {
		errs = append(errs, field.Invalid(fp.Child("tolerationSeconds"), *f.TolerationSeconds, "must not be negative"))
	}
	if f.CreateParallelism < 1 || f.CreateParallelism > 1000 {
		errs = append(errs, field.Invalid(fp.Child("createParallelism"), f.CreateParallelism, "must be between 1 and 1000"))
	}
	if f.QPS < 0 || f.Burst < 0 {
		errs = append(errs, field.Invalid(fp.Child("qps"), f.QPS, "qps and burst must not be negative"))
	}
	return errs
}

func validateControlPlane(c *ControlPlane, cp *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		name string
		v    int
	}{
		{"maxRequestsInflight", c.MaxRequestsInflight}, {"maxMutatingRequestsInflight", c.MaxMutatingRequestsInflight},
		{"controllerQPS", c.ControllerQPS}, {"controllerBurst", c.ControllerBurst},
		{"kwokNodeLeaseParallelism", c.KwokNodeLeaseParallelism}, {"kwokParallelism", c.KwokParallelism},
	} {
		if f.v < 0 {
			errs = append(errs, field.Invalid(cp.Child(f.name), f.v, "must not be negative"))
		}
	}
	if c.APF != "" && c.APF != APFRealistic && c.APF != APFExempt {
		errs = append(errs, field.NotSupported(cp.Child("apf"), c.APF, []string{APFRealistic, APFExempt}))
	}
	if c.APIServerMetrics != "" && c.APIServerMetrics != APIServerMetricsLean && c.APIServerMetrics != APIServerMetricsAll {
		errs = append(errs, field.NotSupported(cp.Child("apiserverMetrics"), c.APIServerMetrics, []string{APIServerMetricsLean, APIServerMetricsAll}))
	}
	if le := c.LeaderElectionRenewDeadline; le != nil && le.Duration != 0 && (le.Duration < 5*time.Second || le.Duration > 10*time.Minute) {
		errs = append(errs, field.Invalid(cp.Child("leaderElectionRenewDeadline"), le.Duration.String(), "must be between 5s and 10m, or 0 for the components' default (10s)"))
	}
	if c.CPUs != 0 && !(c.CPUs >= MinControlPlaneCPUs && c.CPUs <= MaxControlPlaneCPUs) {
		errs = append(errs, field.Invalid(cp.Child("cpus"), c.CPUs, fmt.Sprintf("must be between %g and %d cores, or 0 for no CPU budget", MinControlPlaneCPUs, MaxControlPlaneCPUs)))
	}
	if c.SchedulerPercentageOfNodesToScore < 0 || c.SchedulerPercentageOfNodesToScore > 100 {
		errs = append(errs, field.Invalid(cp.Child("schedulerPercentageOfNodesToScore"), c.SchedulerPercentageOfNodesToScore, "must be between 1 and 100, or 0 for the scheduler's default"))
	}
	return errs
}

func validateTiming(t *Timing, tp *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.HeartbeatFactor < 0.1 || t.HeartbeatFactor > 100 {
		errs = append(errs, field.Invalid(tp.Child("heartbeatFactor"), t.HeartbeatFactor, "must be between 0.1 and 100"))
	}
	if t.NodeLeaseDurationSeconds < 1 || t.NodeLeaseDurationSeconds > 3600 {
		errs = append(errs, field.Invalid(tp.Child("nodeLeaseDurationSeconds"), t.NodeLeaseDurationSeconds, "must be between 1 and 3600"))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"nodeStatusUpdateFrequency", t.NodeStatusUpdateFrequency.Duration},
		{"nodeMonitorGracePeriod", t.NodeMonitorGracePeriod.Duration},
		{"nodeMonitorPeriod", t.NodeMonitorPeriod.Duration},
	} {
		if d.v < time.Second || d.v > maxDowntime {
			errs = append(errs, field.Invalid(tp.Child(d.name), d.v.String(), "must be between 1s and 1h"))
		}
	}
	if t.NodeMonitorPeriod.Duration >= t.NodeMonitorGracePeriod.Duration {
		errs = append(errs, field.Invalid(tp.Child("nodeMonitorPeriod"), t.NodeMonitorPeriod.Duration.String(), "must be shorter than nodeMonitorGracePeriod"))
	}
	if t.NodeEvictionRate < 0 || t.NodeEvictionRate > 1000 || math.IsNaN(t.NodeEvictionRate) {
		errs = append(errs, field.Invalid(tp.Child("nodeEvictionRate"), t.NodeEvictionRate, "must be between 0 (the controller manager's default, 0.1) and 1000 nodes per second"))
	}
	return errs
}

func validateStorm(s *Storm, nodes int, sp *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch s.Kind {
	case StormKubelet, StormRuntime, StormReboot:
	default:
		errs = append(errs, field.NotSupported(sp.Child("kind"), s.Kind, []string{StormKubelet, StormRuntime, StormReboot}))
	}
	selp := sp.Child("select")
	switch {
	case s.Select.Count != 0 && s.Select.Fraction != 0:
		errs = append(errs, field.Invalid(selp, "count and fraction", "set exactly one of count and fraction"))
	case s.Select.Count == 0 && s.Select.Fraction == 0:
		errs = append(errs, field.Required(selp, "set count or fraction"))
	case s.Select.Count < 0 || (nodes > 0 && s.Select.Count > nodes):
		errs = append(errs, field.Invalid(selp.Child("count"), s.Select.Count, fmt.Sprintf("must be between 1 and fleet.nodes (%d)", nodes)))
	case s.Select.Fraction < 0 || s.Select.Fraction > 1:
		errs = append(errs, field.Invalid(selp.Child("fraction"), s.Select.Fraction, "must be in (0, 1]"))
	}
	if s.Select.LabelSelector != "" {
		if _, err := labels.Parse(s.Select.LabelSelector); err != nil {
			errs = append(errs, field.Invalid(selp.Child("labelSelector"), s.Select.LabelSelector, err.Error()))
		}
	}
	wp := sp.Child("waves")
	if s.Waves.Size != "" {
		n, pct, err := ParseCountOrPercent(s.Waves.Size)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(wp.Child("size"), s.Waves.Size, err.Error()))
		case !pct && nodes > 0 && n > nodes:
			errs = append(errs, field.Invalid(wp.Child("size"), s.Waves.Size, fmt.Sprintf("wave larger than the fleet (%d nodes)", nodes)))
		case !pct && s.Select.Count > 0 && n > s.Select.Count:
			errs = append(errs, field.Invalid(wp.Child("size"), s.Waves.Size, fmt.Sprintf("wave larger than the selection (%d nodes)", s.Select.Count)))
		}
		if s.Waves.Interval.Duration <= 0 {
			errs = append(errs, field.Required(wp.Child("interval"), "rolling waves need an interval"))
		}
	}
	if s.Waves.Interval.Duration < 0 || s.Waves.Interval.Duration > maxDowntime {
		errs = append(errs, field.Invalid(wp.Child("interval"), s.Waves.Interval.Duration.String(), "must be between 0 and 1h"))
	}
	if s.Waves.Concurrency < 0 {
		errs = append(errs, field.Invalid(wp.Child("concurrency"), s.Waves.Concurrency, "must not be negative"))
	}
	errs = append(errs, validateDistribution(&s.Downtime, sp.Child("downtime"))...)
	switch s.RuntimeMode {
	case "", RuntimeRefused, RuntimeHung:
		if s.RuntimeMode != "" && s.Kind != StormRuntime {
			errs = append(errs, field.Invalid(sp.Child("runtimeMode"), s.RuntimeMode, "only for storms of kind runtime"))
		}
	default:
		errs = append(errs, field.NotSupported(sp.Child("runtimeMode"), s.RuntimeMode, []string{RuntimeRefused, RuntimeHung}))
	}
	if d := s.InitDuration.Duration; d < 0 || d > maxDowntime {
		errs = append(errs, field.Invalid(sp.Child("initDuration"), d.String(), "must be between 0 and 1h"))
	}
	if s.Planned && s.Kind != StormReboot {
		errs = append(errs, field.Invalid(sp.Child("planned"), true, "only reboot storms can be planned"))
	}
	if nc := s.NodeChanges; nc != nil {
		np := sp.Child("nodeChanges")
		for k := range nc.SetLabels {
			for _, msg := range validation.IsQualifiedName(k) {
				errs = append(errs, field.Invalid(np.Child("setLabels").Key(k), k, msg))
			}
		}
		for i, t := range nc.AddTaints {
			switch t.Effect {
			case "NoSchedule", "PreferNoSchedule", "NoExecute":
			default:
				errs = append(errs, field.NotSupported(np.Child("addTaints").Index(i).Child("effect"), t.Effect, []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}))
			}
			if t.Key == "" {
				errs = append(errs, field.Required(np.Child("addTaints").Index(i).Child("key"), ""))
			}
		}
	}
	errs = append(errs, validateGates(s.FeatureGates, sp.Child("featureGates"))...)
	return errs
}

func validateDistribution(d *Distribution, dp *field.Path) field.ErrorList {
	// The fields each type reads, in the order they are checked.
	reads, ok := map[string][]string{"fixed": {"value"}, "uniform": {"min", "max"}, "normal": {"mean", "stdDev", "min", "max"}}[d.Type]
	if !ok {
		return field.ErrorList{field.NotSupported(dp.Child("type"), d.Type, []string{"fixed", "uniform", "normal"})}
	}
	v := map[string]time.Duration{"value": d.Value.Duration, "min": d.Min.Duration, "max": d.Max.Duration, "mean": d.Mean.Duration, "stdDev": d.StdDev.Duration}
	var errs field.ErrorList
	for _, name := range reads {
		if v[name] < 0 || v[name] > maxDowntime {
			errs = append(errs, field.Invalid(dp.Child(name), v[name].String(), "must be between 0 and 1h"))
		}
	}
	switch hi := d.Max.Duration; {
	case d.Type == "fixed" && d.Value.Duration == 0:
		errs = append(errs, field.Required(dp.Child("value"), "a fixed downtime needs a value"))
	case d.Type == "uniform" && hi == 0:
		errs = append(errs, field.Required(dp.Child("max"), "a uniform downtime draws between min and max"))
	case d.Type != "fixed" && hi != 0 && hi < d.Min.Duration:
		errs = append(errs, field.Invalid(dp.Child("max"), hi.String(), "must not be below min"))
	}
	// A field the type does not read is refused, not ignored: a uniform
	// downtime with value: 30s would otherwise run with min and max.
	why := map[string]string{"fixed": "a fixed downtime is its value only; use type uniform or normal to draw it",
		"uniform": "a uniform downtime draws between min and max", "normal": "a normal downtime draws around mean"}[d.Type]
	readBy := map[string]string{"value": "fixed", "mean": "normal", "stdDev": "normal"}
	for _, name := range []string{"value", "min", "max", "mean", "stdDev"} {
		switch {
		case v[name] == 0 || slices.Contains(reads, name):
		case d.Type == "fixed":
			errs = append(errs, field.Forbidden(dp.Child(name), why))
		default:
			errs = append(errs, field.Forbidden(dp.Child(name), why+"; "+name+" is for type "+readBy[name]))
		}
	}
	return errs
}

// validateKubernetes checks kubernetes.version and the variants' own, and
// that no feature gate of the storm or a variant asks for a behaviour its
// kubelet does not have (ChangeContainerStatusOnKubeletRestart false on
// 1.34, which has no such gate and always resets readiness).
func validateKubernetes(p *Profile) field.ErrorList {
	base := kubeversion.Default
	if p.Kubernetes.Version != "" {
		v, err := kubeversion.Parse(p.Kubernetes.Version)
		if err != nil {
			return field.ErrorList{field.Invalid(field.NewPath("kubernetes", "version"), truncate(p.Kubernetes.Version), err.Error())}
		}
		base = v
	}
	return validateVersionsAt(p, base)
}

// validateVersionsAt checks the variants' Kubernetes versions against the
// fleet's, base, and every gate setting against the version it runs on.
func validateVersionsAt(p *Profile, base kubeversion.Version) field.ErrorList {
	var errs field.ErrorList
	// The storm's gates are checked once at every version a variant runs on.
	checked := map[kubeversion.Version]bool{}
	stormAt := func(v kubeversion.Version) {
		if p.Storm != nil && !checked[v] {
			checked[v] = true
			errs = append(errs, gatesAt(p.Storm.FeatureGates, v, field.NewPath("storm", "featureGates"))...)
		}
	}
	stormAt(base)
	compares := false
	for i, vr := range p.Variants {
		vp := field.NewPath("variants").Index(i)
		v := base
		if k := vr.Kubernetes; k != nil && k.Version != "" {
			kv, err := kubeversion.Parse(k.Version)
			switch {
			case err != nil:
				errs = append(errs, field.Invalid(vp.Child("kubernetes", "version"), truncate(k.Version), err.Error()))
				continue
			case kv.Before(base):
				errs = append(errs, field.Invalid(vp.Child("kubernetes", "version"), kv.Short(),
					fmt.Sprintf("older than the fleet's Kubernetes %s (kubernetes.version): the fleet is provisioned on that version and restored into each variant's control plane, an upgrade, never a downgrade", base.Short())))
				continue
			}
			v = kv
			stormAt(v)
		}
		compares = compares || v != base
		errs = append(errs, gatesAt(vr.FeatureGates, v, vp.Child("featureGates"))...)
	}
	if compares && p.Fleet.RealKubelets > 0 {
		errs = append(errs, field.Invalid(field.NewPath("fleet", "realKubelets"), p.Fleet.RealKubelets,
			"variants of other Kubernetes versions restore the fleet's snapshot into each version's control plane; real kubelets keep their state outside it: not with variants[].kubernetes.version"))
	}
	if compares && p.Storm == nil {
		errs = append(errs, field.Required(field.NewPath("storm"), "variants of other Kubernetes versions compare storms"))
	}
	return errs
}

// gatesAt checks gate settings g against version v's kubelet: a gate v has
// no such gate for (kubeversion.Gate.Fixed) may only be set to the
// behaviour v's kubelet always has.
func gatesAt(g map[string]bool, v kubeversion.Version, gp *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(g)) {
		if kg, ok := v.Gate(k); ok && kg.Fixed && g[k] != kg.Default {
			errs = append(errs, field.Invalid(gp.Key(k), g[k], fmt.Sprintf("Kubernetes %s's kubelet has no such gate: it always behaves as %t", v.Short(), kg.Default)))
		}
	}
	return errs
}

// SetKubeVersion makes v the profile's Kubernetes version (a
// --kube-version flag's override) and checks the variants' versions and
// the profile's gates against it, returning every problem with its field
// path.
func (p *Profile) SetKubeVersion(v kubeversion.Version) field.ErrorList {
	p.Kubernetes.Version = v.String()
	return validateVersionsAt(p, v)
}

func validateGates(g map[string]bool, gp *field.Path) field.ErrorList {
	var errs field.ErrorList
	known := slices.Sorted(maps.Keys(knownGates))
	for _, k := range slices.Sorted(maps.Keys(g)) {
		if _, ok := knownGates[k]; !ok {
			errs = append(errs, field.NotSupported(gp.Key(k), k, known))
		}
	}
	return errs
}

// ParseCountOrPercent parses "50" or "10%".
func ParseCountOrPercent(s string) (n int, percent bool, err error) {
	if strings.HasSuffix(s, "%") {
		v, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
		if err != nil || v <= 0 || v > 100 {
			return 0, true, fmt.Errorf("percentage must be an integer in (0, 100]")
		}
		return v, true, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		return 0, false, fmt.Errorf("must be a positive count or a percentage such as 10%%")
	}
	return v, false, nil
}

// EffectiveGatesAt returns the storm's gates overlaid with a variant's,
// over Kubernetes version kv's defaults of every known gate.
func EffectiveGatesAt(kv kubeversion.Version, s *Storm, v *Variant) map[string]bool {
	out := map[string]bool{}
	for k, d := range knownGates {
		if g, ok := kv.Gate(k); ok {
			d = g.Default
		}
		out[k] = d
	}
	if s != nil {
		maps.Copy(out, s.FeatureGates)
	}
	if v != nil {
		maps.Copy(out, v.FeatureGates)
	}
	return out
}

// ResolvedVariants returns the variants to run: the profile's, or a single
// "default" one.
func (p *Profile) ResolvedVariants() []Variant {
	if len(p.Variants) > 0 {
		return p.Variants
	}
	return []Variant{{Name: "default"}}
}
