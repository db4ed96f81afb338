// Package apiserver is the "apiserver" measurement: the control plane's
// /metrics ([measure.MetricsSource]), scraped every second and turned into
// per-window deltas. It reports requests by verb, resource, subresource and
// code, latency percentiles per verb class, API Priority and Fairness,
// watchers, etcd latency, CPU and RSS per component, and the burst and
// excess figures derived from them. It also holds [WaitSettled], which
// waits for a steady request rate between runs.
//
// A window edge falls on the scrape nearest to it. One scrape of an API
// server the size of a 1,000-node cluster's (91,000 lines, 15 MB as text)
// costs about 30 ms as protobuf (2.5 MB), the format
// [measure.MetricsAccept] asks for, and about 200 ms as text
// (BenchmarkAPIServerScrape, BenchmarkScrapeParseText).
package apiserver
