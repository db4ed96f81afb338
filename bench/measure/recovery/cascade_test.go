package recovery

import (
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/storm"
)

func TestLeaseTracker(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	const lease = 40 * time.Second // renew every 10 s; late beyond 15 s
	type obs struct {
		node  string
		renew float64
	}
	tests := []struct {
		name      string
		obs       []obs
		downs     []string
		from, end float64
		want      LeaseFigures
	}{
		{
			name: "on time",
			obs:  []obs{{"a", 0}, {"a", 10}, {"a", 20}, {"a", 30}},
			from: 5, end: 35,
			want: LeaseFigures{Nodes: 1, Renewals: 3, MaxGap: 10 * time.Second},
		},
		{
			name: "one late renewal, before the storm not counted",
			obs:  []obs{{"a", 0}, {"a", 20}, {"a", 30}, {"a", 46}, {"a", 50}},
			from: 25, end: 55,
			want: LeaseFigures{Nodes: 1, Renewals: 3, Late: 1, LateNodes: 1, MaxGap: 16 * time.Second},
		},
		{
			name: "expired, and still not renewed at the end",
			obs:  []obs{{"a", 0}, {"a", 45}, {"b", 0}, {"b", 10}},
			from: 1, end: 60,
			// a: a 45 s gap (late and expired), then 15 s open: not late.
			// b: 50 s open at the end: late and expired.
			want: LeaseFigures{Nodes: 2, Renewals: 2, Late: 2, LateNodes: 2, Expired: 2, MaxGap: 50 * time.Second},
		},
		{
			name:  "restarted nodes are not healthy ones",
			obs:   []obs{{"a", 0}, {"a", 30}, {"b", 0}, {"b", 10}, {"b", 20}},
			downs: []string{"a"},
			from:  1, end: 25,
			want: LeaseFigures{Nodes: 1, Renewals: 2, MaxGap: 10 * time.Second},
		},
		{
			name: "a repeated or older renew time is no renewal",
			obs:  []obs{{"a", 0}, {"a", 10}, {"a", 10}, {"a", 5}, {"a", 20}},
			from: 1, end: 25,
			want: LeaseFigures{Nodes: 1, Renewals: 2, MaxGap: 10 * time.Second},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewLeaseTracker()
			for _, o := range tc.obs {
				tr.Observe(o.node, lease, at(o.renew))
			}
			var events []storm.Outcome
			for _, n := range tc.downs {
				events = append(events, storm.Outcome{Restart: storm.Restart{Node: n}, Down: at(tc.from)})
			}
			if got := tr.Compute(events, at(tc.from), at(tc.end)); got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
