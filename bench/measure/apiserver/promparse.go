package apiserver

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/stormbench/stormbench/bench/internal/protofield"
	"github.com/stormbench/stormbench/bench/result"
)

// family identifies a metric family stormbench reads from /metrics: first
// the counters, then the gauges, then the histograms (addMetric).
type family uint8

const (
	famNone family = iota
	famRequests
	famFlowDispatched
	famFlowRejected
	famWatchEvents
	famCPU
	famSliceChanges
	famInflight
	famFlowInqueue
	famWatchers    // summed
	famLongRunning // verb="WATCH", summed
	famRSS
	famStartTime
	famRequestDuration // by verb class
	famEtcdDuration
	// execute="true" and "false" (rejected after queueing) together: the
	// time requests of the flow spent in APF's queues.
	famFlowWait
)

// famSpec is one metric family stormbench reads: its name, the labels kept
// as the series key's a, b, c and d, and the figure a window makes of it (a
// counter's delta, a gauge's maximum, a histogram's deltas) in unit,
// labelled by as with the key's values; no figure when the accumulator
// makes it itself.
type famSpec struct {
	name, figure, unit string
	labels, as         []string
}

var flowLabels, flowAs = []string{"priority_level", "flow_schema"}, []string{result.LabelPriorityLevel, result.LabelFlowSchema}

// famSpecs is the one list of the families stormbench reads: the text
// line filter, the protobuf skip, the decoders and the figures all read
// it. The names are the Kubernetes 1.36 ones; see
// k8s.io/apiserver/pkg/endpoints/metrics, .../util/flowcontrol/metrics,
// .../storage/etcd3/metrics and k8s.io/endpointslice/metrics. CPU and RSS
// are labelled with their component (compKey).
var famSpecs = [...]famSpec{
	famRequests:        {name: "apiserver_request_total", labels: []string{"verb", "resource", "subresource", "code"}},
	famFlowDispatched:  {"apiserver_flowcontrol_dispatched_requests_total", FlowDispatched, result.UnitRequests, flowLabels, flowAs},
	famFlowRejected:    {"apiserver_flowcontrol_rejected_requests_total", FlowRejected, result.UnitRequests, append(flowLabels, "reason"), append(flowAs, result.LabelReason)},
	famWatchEvents:     {"apiserver_watch_events_total", WatchEvents, result.UnitEvents, []string{"resource"}, []string{result.LabelResource}},
	famCPU:             {"process_cpu_seconds_total", CPUSeconds, result.UnitSeconds, nil, []string{result.LabelComponent}},
	famSliceChanges:    {"endpoint_slice_controller_changes", SliceControllerChanges, result.UnitCount, []string{"operation"}, []string{result.LabelOperation}},
	famInflight:        {"apiserver_current_inflight_requests", InflightMax, result.UnitCount, []string{"request_kind"}, []string{result.LabelRequestKind}},
	famFlowInqueue:     {"apiserver_flowcontrol_current_inqueue_requests", FlowInqueueMax, result.UnitCount, flowLabels, flowAs},
	famWatchers:        {name: "apiserver_registered_watchers"},
	famLongRunning:     {name: "apiserver_longrunning_requests"},
	famRSS:             {"process_resident_memory_bytes", RSSMax, result.UnitBytes, nil, []string{result.LabelComponent}},
	famStartTime:       {name: "process_start_time_seconds"},
	famRequestDuration: {"apiserver_request_duration_seconds", RequestDuration, "", []string{"verb", "resource"}, []string{result.LabelClass}},
	famEtcdDuration:    {"etcd_request_duration_seconds", EtcdRequestDuration, "", []string{"operation"}, []string{result.LabelOperation}},
	famFlowWait:        {"apiserver_flowcontrol_request_wait_duration_seconds", FlowWait, "", flowLabels, flowAs},
}

// families maps the name of every family of famSpecs to its family.
var families = map[string]family{}

func init() {
	for f := famRequests; int(f) < len(famSpecs); f++ {
		families[famSpecs[f].name] = f
	}
}

// seriesKey identifies one aggregated series: a family and up to four label
// values, in the order documented on the family constant.
type seriesKey struct {
	fam        family
	a, b, c, d string
}

// pairs interleaves names with the key's values a, b, c ...: the
// arguments of result.Labels.
func (k seriesKey) pairs(names []string) []string {
	v := [...]string{k.a, k.b, k.c, k.d}
	out := make([]string, 0, 2*len(names))
	for i, n := range names {
		out = append(out, n, v[i])
	}
	return out
}

// bucketSample is one aggregated Prometheus histogram: cumulative counts per
// upper bound (the last one +Inf), with sum and count.
type bucketSample struct {
	bounds []float64
	cum    []float64
	sum    float64
	count  float64
}

func (h *bucketSample) clone() *bucketSample {
	return &bucketSample{bounds: h.bounds, cum: slices.Clone(h.cum), sum: h.sum, count: h.count}
}

// add adds o into h; it fails when the bucket layouts differ.
func (h *bucketSample) add(o *bucketSample) error {
	if !slices.Equal(h.bounds, o.bounds) {
		return fmt.Errorf("bucket bounds differ: %v vs %v", h.bounds, o.bounds)
	}
	for i := range h.cum {
		h.cum[i] += o.cum[i]
	}
	h.sum += o.sum
	h.count += o.count
	return nil
}

// sample is one parsed scrape of one component, reduced to the series
// stormbench uses.
type sample struct {
	at        time.Time
	startTime float64 // process_start_time_seconds, 0 if absent
	counters  map[seriesKey]float64
	gauges    map[seriesKey]float64
	hists     map[seriesKey]*bucketSample
	// skipped counts series dropped for an inconsistent bucket layout.
	skipped int
}

// metricsParser parses /metrics text into samples. It is not safe for
// concurrent use; each scrape loop owns one, and it reuses its buffers.
type metricsParser struct {
	keep   map[string]bool
	parser expfmt.TextParser
	buf    []byte
}

func newMetricsParser() *metricsParser {
	keep := map[string]bool{}
	for n := range families {
		keep[n] = true
		// Histogram samples carry suffixes; the family name covers HELP/TYPE.
		keep[n+"_bucket"], keep[n+"_sum"], keep[n+"_count"] = true, true, true
	}
	return &metricsParser{keep: keep, parser: expfmt.NewTextParser(model.UTF8Validation)}
}

// filter copies the lines of the families stormbench reads (their samples
// and their # HELP / # TYPE lines) into p.buf. A big API server exposes tens
// of thousands of series stormbench never looks at; dropping them by name
// before expfmt parses the rest cuts the scrape cost several times. Only
// whole lines are selected: every value is still parsed by expfmt.
func (p *metricsParser) filter(text []byte) []byte {
	out := p.buf[:0]
	for len(text) > 0 {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i+1], text[i+1:]
		} else {
			text = nil
		}
		var name []byte
		switch {
		case bytes.HasPrefix(line, []byte("# HELP ")), bytes.HasPrefix(line, []byte("# TYPE ")):
			rest := line[len("# HELP "):]
			end := bytes.IndexAny(rest, " \t\n")
			if end < 0 {
				end = len(rest)
			}
			name = rest[:end]
		case len(line) > 0 && line[0] != '#':
			end := bytes.IndexAny(line, "{ \t\n")
			if end < 0 {
				end = len(line)
			}
			name = line[:end]
		}
		if name != nil && p.keep[string(name)] {
			out = append(out, line...)
			if line[len(line)-1] != '\n' {
				out = append(out, '\n')
			}
		}
	}
	p.buf = out
	return out
}

// decode parses one scrape taken at the given time and served with the
// given Content-Type, which expfmt.ResponseFormat reads. The two formats
// MetricsAccept asks for have fast paths that decode only the families
// stormbench reads: the protobuf delimited format and the text format
// 0.0.4. Any other format (OpenMetrics, text 1.0.0 ...) goes through
// expfmt's decoder, which is slower but takes what the component serves.
// Without a Content-Type the body tells protobuf from text.
func (p *metricsParser) decode(body []byte, contentType string, at time.Time) (*sample, error) {
	s := &sample{
		at:       at,
		counters: map[seriesKey]float64{},
		gauges:   map[seriesKey]float64{},
		hists:    map[seriesKey]*bucketSample{},
	}
	var err error
	switch format := decodeFormat(body, contentType); format.FormatType() {
	case expfmt.TypeProtoDelim:
		err = s.addProtoDelimited(body)
	case expfmt.TypeTextPlain:
		err = p.addText(s, body)
	default:
		err = s.addDecoded(expfmt.NewDecoder(bytes.NewReader(body), format))
		if err != nil {
			err = fmt.Errorf("parsing /metrics (%s): %w", contentType, err)
		}
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// decodeFormat is the format of a body served with the given Content-Type,
// as expfmt.ResponseFormat reads it; without one, the body tells protobuf
// from text.
func decodeFormat(body []byte, contentType string) expfmt.Format {
	switch {
	case contentType != "":
		return expfmt.ResponseFormat(http.Header{"Content-Type": {contentType}})
	case isProtoDelimited(body):
		return expfmt.NewFormat(expfmt.TypeProtoDelim)
	}
	return expfmt.NewFormat(expfmt.TypeTextPlain)
}

// addProtoDelimited adds the families stormbench reads from a body in the
// protobuf delimited format. Each MetricFamily is a length-delimited
// message. Its name is read without decoding the rest, and only the families
// stormbench uses are decoded: a busy API server exposes tens of thousands
// of series stormbench never looks at (watch cache, etcd, admission, Go
// runtime ...), and decoding them all cost a 1,000-node run a fifth of
// stormbench's allocations (results/scale/PROFILE.md, in git history).
func (s *sample) addProtoDelimited(body []byte) error {
	for len(body) > 0 {
		l, n := protowire.ConsumeVarint(body)
		if n < 0 || l > uint64(len(body)-n) {
			return fmt.Errorf("parsing /metrics (protobuf): truncated message")
		}
		msg := body[n : n+int(l)]
		body = body[n+int(l):]
		if families[familyName(msg)] == famNone {
			continue
		}
		var mf dto.MetricFamily
		if err := proto.Unmarshal(msg, &mf); err != nil {
			return fmt.Errorf("parsing /metrics (protobuf): %w", err)
		}
		s.addFamily(&mf)
	}
	return nil
}

// addText adds the families stormbench reads from a body in the text
// format, which the line filter cuts down first.
func (p *metricsParser) addText(s *sample, body []byte) error {
	fams, err := p.parser.TextToMetricFamilies(bytes.NewReader(p.filter(body)))
	if err != nil {
		return fmt.Errorf("parsing /metrics (text): %w", err)
	}
	for _, mf := range fams {
		s.addFamily(mf)
	}
	return nil
}

// addDecoded adds every family dec yields until it ends; addFamily drops
// the families stormbench does not read.
func (s *sample) addDecoded(dec expfmt.Decoder) error {
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		s.addFamily(&mf)
	}
}

// familyName is a MetricFamily message's name (field 1), read without
// decoding the rest; "" when it has none or the message is malformed.
func familyName(msg []byte) (name string) {
	protofield.Each(msg, func(num protowire.Number, v []byte) bool {
		if num == 1 {
			name = string(v)
			return false
		}
		return true
	})
	return name
}

// isProtoDelimited tells the protobuf delimited exposition format from the
// text format. A delimited stream starts with a varint length and then the
// MetricFamily's field 1 (its name: tag byte 0x0a). Valid text starts with
// '#' or a metric name, and a one-character first line would be invalid,
// so the two cannot be confused.
func isProtoDelimited(b []byte) bool {
	if len(b) < 2 || b[0] == '#' {
		return false
	}
	l, n := binary.Uvarint(b)
	return n > 0 && l > 0 && uint64(len(b)-n) >= l && b[n] == 0x0a
}

func (s *sample) addFamily(mf *dto.MetricFamily) {
	fam := families[mf.GetName()]
	if fam == famNone {
		return
	}
	for _, m := range mf.GetMetric() {
		s.addMetric(fam, m)
	}
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func scalar(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return math.NaN()
}

func (s *sample) addMetric(fam family, m *dto.Metric) {
	var v [4]string
	for i, l := range famSpecs[fam].labels {
		v[i] = label(m, l)
	}
	k := seriesKey{fam, v[0], v[1], v[2], v[3]}
	switch fam {
	case famWatchEvents:
		k.a = cmp.Or(k.a, label(m, "kind")) // before Kubernetes 1.30 the label was kind
	case famLongRunning:
		if label(m, "verb") != "WATCH" {
			return
		}
	case famStartTime:
		s.startTime = scalar(m)
		return
	case famRequestDuration:
		// Non-resource requests (/healthz, /metrics ...) carry no resource
		// and are not part of the API call latency SLO.
		k.a, k.b = verbClass(k.a), ""
		if k.a == "" || v[1] == "" {
			return
		}
	}
	switch {
	case fam >= famRequestDuration:
		s.addHist(k, m)
	case fam >= famInflight:
		addScalar(s.gauges, k, scalar(m))
	default:
		addScalar(s.counters, k, scalar(m))
	}
}

// addScalar adds v to a counter's or a gauge's series, unless it is NaN.
func addScalar(into map[seriesKey]float64, k seriesKey, v float64) {
	if !math.IsNaN(v) {
		into[k] += v
	}
}

func (s *sample) addHist(k seriesKey, m *dto.Metric) {
	h := m.GetHistogram()
	if h == nil {
		return
	}
	b := &bucketSample{sum: h.GetSampleSum(), count: float64(h.GetSampleCount())}
	if h.SampleCountFloat != nil {
		b.count = h.GetSampleCountFloat()
	}
	for _, bk := range h.GetBucket() {
		c := float64(bk.GetCumulativeCount())
		if bk.CumulativeCountFloat != nil {
			c = bk.GetCumulativeCountFloat()
		}
		b.bounds = append(b.bounds, bk.GetUpperBound())
		b.cum = append(b.cum, c)
	}
	if n := len(b.bounds); n == 0 || !math.IsInf(b.bounds[n-1], 1) {
		b.bounds = append(b.bounds, math.Inf(1))
		b.cum = append(b.cum, b.count)
	}
	if prev, ok := s.hists[k]; ok {
		if err := prev.add(b); err != nil {
			s.skipped++
		}
		return
	}
	s.hists[k] = b
}

// verbClass maps an apiserver_request_total verb label to its latency class,
// or "" for the long-running verbs (WATCH, CONNECT) the SLO excludes.
func verbClass(verb string) string {
	switch verb {
	case "POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY":
		return ClassMutating
	case "GET":
		return ClassGet
	case "LIST":
		return ClassList
	}
	return ""
}

// delta returns cur − prev per series, treating a decrease as a counter
// reset (the component restarted): the increment is then cur itself, as in
// PromQL's increase(). A changed process_start_time_seconds resets every
// series at once, which also catches a restart after which a counter already
// grew past its old value. Series new in cur count from zero, because
// Prometheus client libraries create a labelled series at its first
// increment. reset reports whether any reset was seen.
//
// A series that decreased while process_start_time_seconds stayed the same
// is not a reset but a stale value: the scraper keeps several scrapes in
// flight, and the server may read a metric for the later one before the
// earlier one (registry.Gather collects each collector in a goroutine of
// its own). Its increment is 0 and base keeps its previous value, so
// the next interval counts it and nothing is lost or counted twice. base is
// what the next sample is diffed against: cur, or a copy of cur with the
// stale series' previous values; stale counts those series.
func delta(prev, cur *sample) (counters map[seriesKey]float64, hists map[seriesKey]*bucketSample, reset bool, base *sample, stale int) {
	restarted := restartedBetween(prev, cur)
	sameProcess := prev.startTime != 0 && cur.startTime != 0 && !restarted
	reset = restarted
	base = cur
	keep := func() {
		if base == cur {
			c := *cur
			c.counters, c.hists = maps.Clone(cur.counters), maps.Clone(cur.hists)
			base = &c
		}
		stale++
	}
	counters = make(map[seriesKey]float64, len(cur.counters))
	for k, v := range cur.counters {
		p, ok := prev.counters[k]
		switch {
		case !ok || restarted:
			counters[k] = v
		case v < p && sameProcess:
			counters[k] = 0
			keep()
			base.counters[k] = p
		case v < p:
			counters[k] = v
			reset = true
		default:
			counters[k] = v - p
		}
	}
	hists = make(map[seriesKey]*bucketSample, len(cur.hists))
	for k, h := range cur.hists {
		p, ok := prev.hists[k]
		switch {
		case !ok || restarted || !slices.Equal(p.bounds, h.bounds):
			hists[k] = h.clone()
		case histDecreased(p, h) && sameProcess:
			hists[k] = &bucketSample{bounds: h.bounds, cum: make([]float64, len(h.cum))}
			keep()
			base.hists[k] = p
		case histDecreased(p, h):
			hists[k] = h.clone()
			reset = true
		default:
			d := &bucketSample{bounds: h.bounds, cum: make([]float64, len(h.cum)), sum: h.sum - p.sum, count: h.count - p.count}
			for i := range h.cum {
				d.cum[i] = h.cum[i] - p.cum[i]
			}
			hists[k] = d
		}
	}
	return counters, hists, reset, base, stale
}

// startTimeSlack is how far before the previous scrape a restarted
// process's start time may read: process_start_time_seconds is the boot
// time (/proc/stat btime) plus the process's start since boot, and btime
// moves by a second now and then while the clock is adjusted
// (prometheus/client_golang#289).
const startTimeSlack = 2.0

// restartedBetween reports whether the component restarted between two
// scrapes: its start time changed and the new one is not before the
// previous scrape (less startTimeSlack). A start time that moved but still
// lies before the previous scrape is the same process read through a
// moved btime: on this project's 2-core VM every component's start time
// moved by a second at once during a fleet-5k storm, and counting each
// counter from zero added the components' whole lifetime to one second
// of the storm (135,467 requests/s, 455 CPU-seconds of the API server).
func restartedBetween(prev, cur *sample) bool {
	if prev.startTime == 0 || cur.startTime == 0 || prev.startTime == cur.startTime {
		return false
	}
	if prev.at.IsZero() {
		return true
	}
	return cur.startTime >= float64(prev.at.UnixNano())/1e9-startTimeSlack
}

func histDecreased(p, h *bucketSample) bool {
	if h.count < p.count {
		return true
	}
	for i := range h.cum {
		if h.cum[i] < p.cum[i] {
			return true
		}
	}
	return false
}
