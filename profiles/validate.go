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
	ks := []*Kubernetes{&p.Kubernetes}
	for _, v := range p.Variants {
		ks = append(ks, v.Kubernetes)
	}
	for _, k := range ks {
		if k == nil || k.Version == "" {
			continue
		}
		if v, err := kubeversion.Parse(k.Version); err == nil {
			k.Version = v.String()
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
	errs := slices.Concat(oneOf(field.NewPath("apiVersion"), p.APIVersion, false, APIVersion), oneOf(field.NewPath("kind"), p.Kind, false, Kind))
	mp := field.NewPath("metadata", "name")
	if p.Metadata.Name == "" {
		errs = append(errs, field.Required(mp, ""))
	} else {
		for _, msg := range validation.IsDNS1123Label(p.Metadata.Name) {
			errs = append(errs, field.Invalid(mp, p.Metadata.Name, msg))
		}
	}
	errs = slices.Concat(errs, validateKubernetes(p), validateFleet(&p.Fleet, field.NewPath("fleet")),
		validateTiming(&p.Timing, field.NewPath("timing")), validateControlPlane(&p.ControlPlane, field.NewPath("controlPlane")))
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
	errs = slices.Concat(errs, between(field.NewPath("repetitions"), p.Repetitions.Count, 1, 100),
		oneOf(field.NewPath("repetitions", "seeds"), truncate(p.Repetitions.Seeds), true, SeedsFixed, SeedsVary))
	if m := p.Measurements.EndpointSlices; m != nil {
		errs = append(errs, between(field.NewPath("measurements", "endpointSlices", "watchers"), m.Watchers, 0, 10000)...)
	}
	if m := p.Measurements.APIServer; m != nil {
		ap := field.NewPath("measurements", "apiserver")
		errs = slices.Concat(errs, invalidIf(m.Interval.Duration < 100*time.Millisecond, ap.Child("interval"), m.Interval.Duration.String(), "must be at least 100ms"),
			between(ap.Child("maxInFlight"), m.MaxInFlight, 1, 16))
		if rs := m.RestoreSettle; rs != nil {
			errs = slices.Concat(errs, invalidIf(rs.Window.Duration != 0 && rs.Window.Duration < 2*time.Second, ap.Child("restoreSettle", "window"), rs.Window.Duration.String(), "must be at least 2s"),
				invalidIf(rs.Windows != 0 && (rs.Windows < 2 || rs.Windows > 10), ap.Child("restoreSettle", "windows"), rs.Windows, "must be between 2 and 10"))
		}
	}
	return append(errs, validateCIGates(p.Gates, field.NewPath("gates"))...)
}

// invalidIf is a field.Invalid of v at p when bad.
func invalidIf(bad bool, p *field.Path, v any, msg string) field.ErrorList {
	if !bad {
		return nil
	}
	return field.ErrorList{field.Invalid(p, v, msg)}
}

// between checks that lo <= v <= hi (NaN passes: a check that refuses it
// says so).
func between[T int | float64](p *field.Path, v, lo, hi T) field.ErrorList {
	return invalidIf(v < lo || v > hi, p, v, fmt.Sprintf("must be between %v and %v", lo, hi))
}

// notNegative checks that v is 0 or more.
func notNegative[T int | int64](p *field.Path, v T) field.ErrorList {
	return invalidIf(v < 0, p, v, "must not be negative")
}

// oneOf checks that v is one of allowed, or "" when optional.
func oneOf(p *field.Path, v string, optional bool, allowed ...string) field.ErrorList {
	if v == "" && optional || slices.Contains(allowed, v) {
		return nil
	}
	return field.ErrorList{field.NotSupported(p, v, allowed)}
}

// MaxRealKubelets bounds fleet.realKubelets: each one is a kubelet process
// and a runtime process on this machine.
const MaxRealKubelets = 64

// validateRealKubelets checks fleet.realKubelets: within the fleet, and at
// least one workload of the mix that a real kubelet on a fake runtime can
// run (exec probes only).
func validateRealKubelets(f *Fleet, fp *field.Path) field.ErrorList {
	if errs := oneOf(fp.Child("realKubeletBackend"), f.RealKubeletBackend, true, RealKubeletHollow, RealKubeletContainerd); errs != nil || f.RealKubelets == 0 {
		return errs
	}
	rp := fp.Child("realKubelets")
	if f.RealKubelets < 0 || f.RealKubelets > MaxRealKubelets || f.RealKubelets > f.Nodes {
		return field.ErrorList{field.Invalid(rp, f.RealKubelets, fmt.Sprintf("must be between 0 and the fleet's nodes, at most %d", MaxRealKubelets))}
	}
	runnable := slices.ContainsFunc(f.Workloads, func(w WorkloadShare) bool {
		if w.Share == 0 || !workloads.Exists(w.Template) {
			return false
		}
		ok, err := workloads.RunsOnRealKubelets(w.Template)
		return err == nil && ok
	})
	return invalidIf(!runnable, rp, f.RealKubelets, "no workload of fleet.workloads can run on a real kubelet: each has HTTP or TCP probes, which a fake runtime cannot answer (add web-exec or statefulset)")
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
	return append(errs, invalidIf(f.Nodes > 0 && f.RealKubelets >= f.Nodes, sp, "set", "every node is a real kubelet (fleet.realKubelets), and real kubelets hold their own watches: no KWOK node is left to hold steady watches for")...)
}

func validateFleet(f *Fleet, fp *field.Path) field.ErrorList {
	errs := slices.Concat(between(fp.Child("nodes"), f.Nodes, 1, maxNodes), between(fp.Child("podsPerNode"), f.PodsPerNode, 1, maxPodsDense),
		invalidIf(f.MaxPodsPerNode < f.PodsPerNode, fp.Child("maxPodsPerNode"), f.MaxPodsPerNode, "must be at least podsPerNode"))
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
		errs = slices.Concat(errs, notNegative(ip.Child("share"), w.Share), between(ip.Child("replicas"), w.Replicas, 1, 10000))
	}
	errs = slices.Concat(errs, validateRealKubelets(f, fp), validateSteadyWatches(f, fp))
	for _, q := range []struct{ name, val string }{{"nodeCPU", f.NodeCPU}, {"nodeMemory", f.NodeMemory}} {
		if qv, err := resource.ParseQuantity(q.val); err != nil {
			errs = append(errs, field.Invalid(fp.Child(q.name), truncate(q.val), "must be a quantity such as 32, 500m, 256Gi"))
		} else if qv.Sign() <= 0 {
			errs = append(errs, field.Invalid(fp.Child(q.name), q.val, "must be positive"))
		}
	}
	if f.TolerationSeconds != nil {
		errs = append(errs, notNegative(fp.Child("tolerationSeconds"), *f.TolerationSeconds)...)
	}
	return slices.Concat(errs, between(fp.Child("createParallelism"), f.CreateParallelism, 1, 1000),
		invalidIf(f.QPS < 0 || f.Burst < 0, fp.Child("qps"), f.QPS, "qps and burst must not be negative"))
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
		errs = append(errs, notNegative(cp.Child(f.name), f.v)...)
	}
	le := ptr.Deref(c.LeaderElectionRenewDeadline, metav1.Duration{}).Duration
	return slices.Concat(errs, oneOf(cp.Child("apf"), c.APF, true, APFRealistic, APFExempt),
		oneOf(cp.Child("apiserverMetrics"), c.APIServerMetrics, true, APIServerMetricsLean, APIServerMetricsAll),
		invalidIf(le != 0 && (le < 5*time.Second || le > 10*time.Minute), cp.Child("leaderElectionRenewDeadline"), le.String(), "must be between 5s and 10m, or 0 for the components' default (10s)"),
		invalidIf(c.CPUs != 0 && !(c.CPUs >= MinControlPlaneCPUs && c.CPUs <= MaxControlPlaneCPUs), cp.Child("cpus"), c.CPUs, fmt.Sprintf("must be between %g and %d cores, or 0 for no CPU budget", MinControlPlaneCPUs, MaxControlPlaneCPUs)),
		invalidIf(c.SchedulerPercentageOfNodesToScore < 0 || c.SchedulerPercentageOfNodesToScore > 100, cp.Child("schedulerPercentageOfNodesToScore"), c.SchedulerPercentageOfNodesToScore, "must be between 1 and 100, or 0 for the scheduler's default"))
}

func validateTiming(t *Timing, tp *field.Path) field.ErrorList {
	errs := slices.Concat(between(tp.Child("heartbeatFactor"), t.HeartbeatFactor, 0.1, 100), between(tp.Child("nodeLeaseDurationSeconds"), t.NodeLeaseDurationSeconds, 1, 3600))
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"nodeStatusUpdateFrequency", t.NodeStatusUpdateFrequency.Duration},
		{"nodeMonitorGracePeriod", t.NodeMonitorGracePeriod.Duration},
		{"nodeMonitorPeriod", t.NodeMonitorPeriod.Duration},
	} {
		errs = append(errs, invalidIf(d.v < time.Second || d.v > maxDowntime, tp.Child(d.name), d.v.String(), "must be between 1s and 1h")...)
	}
	return slices.Concat(errs, invalidIf(t.NodeMonitorPeriod.Duration >= t.NodeMonitorGracePeriod.Duration, tp.Child("nodeMonitorPeriod"), t.NodeMonitorPeriod.Duration.String(), "must be shorter than nodeMonitorGracePeriod"),
		invalidIf(t.NodeEvictionRate < 0 || t.NodeEvictionRate > 1000 || math.IsNaN(t.NodeEvictionRate), tp.Child("nodeEvictionRate"), t.NodeEvictionRate, "must be between 0 (the controller manager's default, 0.1) and 1000 nodes per second"))
}

func validateStorm(s *Storm, nodes int, sp *field.Path) field.ErrorList {
	errs := oneOf(sp.Child("kind"), s.Kind, false, StormKubelet, StormRuntime, StormReboot)
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
	errs = slices.Concat(errs, invalidIf(s.Waves.Interval.Duration < 0 || s.Waves.Interval.Duration > maxDowntime, wp.Child("interval"), s.Waves.Interval.Duration.String(), "must be between 0 and 1h"),
		notNegative(wp.Child("concurrency"), s.Waves.Concurrency), validateDistribution(&s.Downtime, sp.Child("downtime")),
		oneOf(sp.Child("runtimeMode"), s.RuntimeMode, true, RuntimeRefused, RuntimeHung),
		invalidIf((s.RuntimeMode == RuntimeRefused || s.RuntimeMode == RuntimeHung) && s.Kind != StormRuntime, sp.Child("runtimeMode"), s.RuntimeMode, "only for storms of kind runtime"),
		invalidIf(s.InitDuration.Duration < 0 || s.InitDuration.Duration > maxDowntime, sp.Child("initDuration"), s.InitDuration.Duration.String(), "must be between 0 and 1h"),
		invalidIf(s.Planned && s.Kind != StormReboot, sp.Child("planned"), true, "only reboot storms can be planned"))
	if nc := s.NodeChanges; nc != nil {
		np := sp.Child("nodeChanges")
		for k := range nc.SetLabels {
			for _, msg := range validation.IsQualifiedName(k) {
				errs = append(errs, field.Invalid(np.Child("setLabels").Key(k), k, msg))
			}
		}
		for i, t := range nc.AddTaints {
			tp := np.Child("addTaints").Index(i)
			errs = append(errs, oneOf(tp.Child("effect"), t.Effect, false, "NoSchedule", "PreferNoSchedule", "NoExecute")...)
			if t.Key == "" {
				errs = append(errs, field.Required(tp.Child("key"), ""))
			}
		}
	}
	return append(errs, validateGates(s.FeatureGates, sp.Child("featureGates"))...)
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
	if _, err := kubeversion.Parse(p.Kubernetes.Version); err != nil && p.Kubernetes.Version != "" {
		return field.ErrorList{field.Invalid(field.NewPath("kubernetes", "version"), truncate(p.Kubernetes.Version), err.Error())}
	}
	return validateVersionsAt(p, p.KubeVersion())
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
