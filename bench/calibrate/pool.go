package calibrate

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"slices"
	"time"
)

// Pooling rounds: one table of n restarts a side made from rounds of
// fewer nodes each. A machine that cannot hold K real kubelets at once
// without saturating (the kubelets on containerd run every exec probe
// through runc, and ten of them kept an AMD EPYC ×2 saturated through
// the exec cases, their requests cut by the case's end) can hold K/2 twice.
// Each round restarts its own nodes once per case, so the pooled rows are
// the rounds' restarts (and not-ready periods) together, judged again.

// Round is one calibration run a pooled result was made of.
type Round struct {
	Tool    string    `json:"tool,omitempty"`
	Command string    `json:"command,omitempty"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
}

// Pool puts calibration rounds of the same set-up into one result: every
// case's restarts, per-restart values and not-ready periods together, its
// figures computed again from them and judged again. The rounds must agree
// on everything but their nodes' restarts: version, backend, nodes and
// pods, probes, tolerance, model, machine and cases. The host of a pooled
// case is its busiest round's (the most saturated seconds: the slack a
// host-bound case's timings are judged with).
//
// One round alone keeps its figures and has its rows judged again, in
// place, by its tolerance, host-bound slack included (calibrate rejudge:
// for a table whose rules changed after it was made): only Agree,
// HostBound, Test and Shift change.
func Pool(rounds ...*Result) (*Result, error) {
	first := rounds[0]
	for i, r := range rounds[1:] {
		if err := samePool(first, r); err != nil {
			return nil, fmt.Errorf("round %d cannot be pooled with round 1: %w", i+2, err)
		}
	}
	p := *first
	if len(rounds) > 1 {
		p.Rounds, p.Errors, p.Complete = nil, nil, true
		p.RealNodes, p.SimulatedNodes = nil, nil
		for _, r := range rounds {
			p.Rounds = append(p.Rounds, roundsOf(r)...)
			if r.Start.Before(p.Start) {
				p.Start = r.Start
			}
			if r.End.After(p.End) {
				p.End = r.End
			}
			p.Complete = p.Complete && r.Complete
			p.Errors = append(p.Errors, r.Errors...)
			p.RealNodes = appendNew(p.RealNodes, r.RealNodes...)
			p.SimulatedNodes = appendNew(p.SimulatedNodes, r.SimulatedNodes...)
		}
		p.Cases = make([]CaseResult, len(first.Cases))
		for i := range first.Cases {
			cases := make([]*CaseResult, len(rounds))
			for j, r := range rounds {
				cases[j] = &r.Cases[i]
			}
			p.Cases[i] = poolCase(cases)
		}
	}
	for i := range p.Cases {
		c := &p.Cases[i]
		for j := range c.Rows {
			c.Rows[j].HostBound = false
			p.Tolerance.judge(&c.Rows[j])
		}
		if c.Host != nil && c.Host.Bound {
			judgeHostBound(c.Rows, p.Tolerance, c.Host)
		}
	}
	return &p, nil
}

// samePool says why b is not a round of a's set-up, nil when it is.
func samePool(a, b *Result) error {
	for _, f := range []struct {
		what string
		a, b any
	}{
		{"kind", a.Kind, b.Kind},
		{"Kubernetes version", a.KubeVersion, b.KubeVersion},
		{"API server version", a.ServerVersion, b.ServerVersion},
		{"backend", backendOf(a), backendOf(b)},
		{"nodes", a.Nodes, b.Nodes},
		{"pods per node", a.PodsPerNode, b.PodsPerNode},
		{"bystanders", a.Bystanders, b.Bystanders},
		{"node eviction rate", a.NodeEvictionRate, b.NodeEvictionRate},
		{"probe period", a.ProbePeriod, b.ProbePeriod},
		{"initDuration", a.InitDuration, b.InitDuration},
		{"pod features", a.PodFeatures, b.PodFeatures},
		{"kubeAPIQPS", a.KubeAPIQPS, b.KubeAPIQPS},
		{"kubeAPIBurst", a.KubeAPIBurst, b.KubeAPIBurst},
		{"stagger", a.Stagger, b.Stagger},
		{"tolerance", a.Tolerance, b.Tolerance},
		{"model fingerprint", a.ModelFingerprint, b.ModelFingerprint},
		{"machine", a.Machine.String(), b.Machine.String()},
	} {
		if !reflect.DeepEqual(f.a, f.b) {
			return fmt.Errorf("%s differs: %v against %v", f.what, f.b, f.a)
		}
	}
	if len(a.Cases) != len(b.Cases) {
		return fmt.Errorf("cases differ: %d against %d", len(b.Cases), len(a.Cases))
	}
	for i := range a.Cases {
		if !reflect.DeepEqual(a.Cases[i].Case, b.Cases[i].Case) {
			return fmt.Errorf("case %d differs: %s against %s", i+1, b.Cases[i].Name, a.Cases[i].Name)
		}
	}
	return nil
}

// roundsOf is a result's rounds: its own when pooled, else itself.
func roundsOf(r *Result) []Round {
	if len(r.Rounds) > 0 {
		return r.Rounds
	}
	return []Round{{Tool: r.Tool, Command: r.Command, Start: r.Start, End: r.End}}
}

// poolCase is one case of every round together.
func poolCase(cases []*CaseResult) CaseResult {
	p := CaseResult{Case: cases[0].Case}
	var metrics []string
	for _, c := range cases {
		p.Restarts.Real += c.Restarts.Real
		p.Restarts.Simulated += c.Restarts.Simulated
		p.Errors = append(p.Errors, c.Errors...)
		if c.Host != nil && (p.Host == nil || c.Host.SaturatedSeconds > p.Host.SaturatedSeconds) {
			p.Host = c.Host
		}
		for _, row := range c.Rows {
			metrics = appendNew(metrics, row.Metric)
		}
	}
	realPeriods, simPeriods := pooledValues(cases, MetricNotReadyKS, false)
	for _, m := range metrics {
		p.Rows = append(p.Rows, poolRow(cases, m, realPeriods, simPeriods))
	}
	return p
}

// poolRow is the metric's row of every round together. A not-ready
// quantile is taken again from the pooled periods; a figure over
// restarts or periods is the mean of the pooled values; a figure without
// values (a cost, the start flashes) is the rounds' mean weighted by their
// restarts, the peak RSS their maximum.
func poolRow(cases []*CaseResult, metric string, realPeriods, simPeriods []float64) Row {
	var row Row
	for _, c := range cases {
		if r := caseRow(c, metric); r != nil {
			row = *r
			break
		}
	}
	row.Test, row.Shift, row.HostBound = nil, nil, false
	if q, ok := notReadyQuantiles[metric]; ok {
		rd, sd := durations(realPeriods), durations(simPeriods)
		row.Real, row.Simulated = round3(quantile(rd, q)), round3(quantile(sd, q))
		row.RealSpread, row.SimulatedSpread = quantileSpread(rd, q), quantileSpread(sd, q)
		if metric == MetricNotReadyP50 {
			row.Note = fmt.Sprintf("%d vs %d not-ready periods", len(rd), len(sd))
		}
		return row
	}
	if row.RealSpread != nil || row.SimulatedSpread != nil {
		periods := metric == MetricNotReadyKS
		rv, sv := pooledValues(cases, metric, !periods)
		row.Real, row.Simulated = round3(mean(rv)), round3(mean(sv))
		row.RealSpread, row.SimulatedSpread = spreadOf(rv), spreadOf(sv)
		if periods {
			for _, s := range []*Spread{row.RealSpread, row.SimulatedSpread} {
				if s != nil {
					s.Of = "periods"
				}
			}
		}
		return row
	}
	var realSum, simSum, realN, simN float64
	for _, c := range cases {
		r := cmp.Or(caseRow(c, metric), &Row{})
		if metric == MetricKubeletPeakRSS {
			realSum = math.Max(realSum, r.Real)
			continue
		}
		realSum += r.Real * float64(c.Restarts.Real)
		simSum += r.Simulated * float64(c.Restarts.Simulated)
		realN += float64(c.Restarts.Real)
		simN += float64(c.Restarts.Simulated)
	}
	if metric == MetricKubeletPeakRSS {
		row.Real = realSum
		return row
	}
	row.Real, row.Simulated = round3(realSum/max(realN, 1)), round3(simSum/max(simN, 1))
	return row
}

// notReadyQuantiles are the rows taken as a quantile of the not-ready
// periods, which only the KS row carries (periodsSpread).
var notReadyQuantiles = map[string]float64{MetricNotReadyP50: 0.5, MetricNotReadyP90: 0.9, MetricNotReadyMax: 1}

// pooledValues are the metric's values of every round, each side's. A
// round without the row had nothing to count: with perRestart, it adds a
// 0 for each of its restarts; of periods, none.
func pooledValues(cases []*CaseResult, metric string, perRestart bool) (real, sim []float64) {
	for _, c := range cases {
		r := caseRow(c, metric)
		switch {
		case r != nil:
			real, sim = append(real, values(r.RealSpread)...), append(sim, values(r.SimulatedSpread)...)
		case perRestart:
			real, sim = append(real, make([]float64, c.Restarts.Real)...), append(sim, make([]float64, c.Restarts.Simulated)...)
		}
	}
	if !perRestart {
		slices.Sort(real)
		slices.Sort(sim)
	}
	return real, sim
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return sum(v) / float64(len(v))
}

// durations is seconds as sorted durations.
func durations(secs []float64) []time.Duration {
	out := mapped(secs, func(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) })
	slices.Sort(out)
	return out
}

// appendNew appends the values of add that s does not hold yet.
func appendNew(s []string, add ...string) []string {
	for _, v := range add {
		if !slices.Contains(s, v) {
			s = append(s, v)
		}
	}
	return s
}
