package cluster

// LeanDisabledMetrics are the metric families the embedded kube-apiserver
// runs without (--disabled-metrics) unless the profile sets
// controlPlane.apiserverMetrics: all.
//
// Why: stormbench scrapes the API server every second, about 30 times the
// scrape load of a Prometheus at its usual 30 s, and a full scrape of an
// API server under a 1,000-node storm took about 3 s (issue 16). These are
// the biggest families no stormbench figure reads (bench/measure's
// families and the build-info line of cluster status): histograms by
// resource, verb or priority level, 42 % of the sample lines and 44 % of
// the bytes of a /metrics body of the embedded v1.36.3 API server. The API
// server serves every request the same without them: a disabled metric is
// not registered and its observations go to a no-op
// (k8s.io/component-base/metrics: lazyMetric.preprocessMetric hides a
// name in disabledMetrics; kubeRegistry.MustRegister skips hidden
// collectors; HistogramVec.WithLabelValues returns noop when not created).
//
// Only metrics registered after the flags apply can be disabled: the API
// server applies --disabled-metrics when it builds its configuration
// (k8s.io/kubernetes pkg/controlplane/apiserver/config.go,
// opts.Metrics.Apply()) and registers these families when it installs
// /metrics (k8s.io/apiserver pkg/server/routes/metrics.go, register()).
// The admission and workqueue histograms, big as they are, register at
// process init (admission/metrics `Metrics = newAdmissionMetrics()`,
// component-base's workqueue provider init()) and would stay: they are not
// listed. A name the server does not know is accepted and ignored
// (SetDisabledMetrics only adds it to a set; validation checks only that
// it is a well-formed metric name).
func LeanDisabledMetrics() []string {
	return []string{
		// k8s.io/apiserver/pkg/endpoints/metrics
		"apiserver_request_sli_duration_seconds",
		"apiserver_watch_list_duration_seconds",
		"apiserver_watch_events_sizes",
		"apiserver_response_sizes",
		"apiserver_request_filter_duration_seconds",
		// k8s.io/apiserver/pkg/endpoints/handlers/metrics
		"apiserver_request_body_size_bytes",
		// k8s.io/apiserver/pkg/storage/cacher/metrics
		"apiserver_watch_cache_read_wait_seconds",
		// k8s.io/apiserver/pkg/util/flowcontrol/metrics; stormbench reads
		// the dispatched, rejected, in-queue and wait families only.
		"apiserver_flowcontrol_request_execution_seconds",
		"apiserver_flowcontrol_priority_level_request_utilization",
		"apiserver_flowcontrol_work_estimated_seats",
		"apiserver_flowcontrol_priority_level_seat_utilization",
		"apiserver_flowcontrol_demand_seats",
		"apiserver_flowcontrol_request_queue_length_after_enqueue",
		"apiserver_flowcontrol_watch_count_samples",
		"apiserver_flowcontrol_read_vs_write_current_requests",
	}
}
