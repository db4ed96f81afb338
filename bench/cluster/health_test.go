package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
)

// fakeComponent is a health check that passes from healthyAt on the fake
// clock (never when negative), and counts its calls.
type fakeComponent struct {
	name, what string
	healthyAt  time.Duration
	calls      int
}

func fakeChecks(clk *testingclock.FakeClock, comps []*fakeComponent) []HealthCheck {
	start := clk.Now()
	var out []HealthCheck
	for _, c := range comps {
		out = append(out, HealthCheck{Component: c.name, What: c.what, Check: func(ctx context.Context) error {
			c.calls++
			if c.healthyAt >= 0 && clk.Since(start) >= c.healthyAt {
				return nil
			}
			return fmt.Errorf("%s refused", c.name)
		}})
	}
	return out
}

// runWait runs WaitHealthy on a fake clock, stepping the clock whenever the
// wait sleeps, and returns its error and how long it took on the clock.
func runWait(t *testing.T, clk *testingclock.FakeClock, checks []HealthCheck, o WaitOptions) (error, time.Duration) {
	t.Helper()
	o.Clock = clk
	start := clk.Now()
	done := make(chan error, 1)
	go func() { done <- WaitHealthy(context.Background(), checks, o) }()
	for {
		select {
		case err := <-done:
			return err, clk.Since(start)
		default:
		}
		if clk.HasWaiters() {
			clk.Step(100 * time.Millisecond)
		} else {
			time.Sleep(time.Millisecond)
		}
	}
}

func TestWaitHealthy(t *testing.T) {
	tests := []struct {
		name  string
		comps []*fakeComponent
		// wantErr is "" for success, else what the error must say.
		wantErr    []string
		wantFailed []string // components the *UnhealthyError names
		wantTook   time.Duration
		// wantProgress are the progress reports, the checks' names each.
		wantProgress []string
	}{
		{
			name: "all healthy at once",
			comps: []*fakeComponent{
				{name: "kube-apiserver", what: "/readyz"}, {name: "kube-scheduler", what: "/healthz"}, {name: "kwok-controller", what: "/healthz"},
			},
			wantTook: 0,
		},
		{
			name: "one component late",
			comps: []*fakeComponent{
				{name: "kube-apiserver", what: "/readyz"}, {name: "kwok-controller", what: "/healthz", healthyAt: 1200 * time.Millisecond},
			},
			wantTook:     1500 * time.Millisecond, // the first round after 1.2s
			wantProgress: []string{"kwok-controller /healthz"},
		},
		{
			name: "progress when the waited-for set shrinks",
			comps: []*fakeComponent{
				{name: "kube-controller-manager", what: "leader lease", healthyAt: 400 * time.Millisecond}, {name: "kwok-controller", what: "/healthz", healthyAt: time.Second},
			},
			wantTook:     time.Second,
			wantProgress: []string{"kube-controller-manager leader lease, kwok-controller /healthz", "kwok-controller /healthz"},
		},
		{
			name: "timeout names the component",
			comps: []*fakeComponent{
				{name: "kube-apiserver", what: "/readyz"}, {name: "kube-scheduler", what: "leader lease", healthyAt: -1},
			},
			wantErr:      []string{"not healthy after 2s", "kube-scheduler leader lease (kube-scheduler refused)"},
			wantFailed:   []string{"kube-scheduler"},
			wantTook:     2 * time.Second,
			wantProgress: []string{"kube-scheduler leader lease"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			var progress []string
			o := WaitOptions{Timeout: 2 * time.Second, Interval: 500 * time.Millisecond, Progress: func(w []HealthCheck) {
				progress = append(progress, names(w))
			}}
			err, took := runWait(t, clk, fakeChecks(clk, tt.comps), o)
			if len(tt.wantErr) == 0 && err != nil {
				t.Fatalf("WaitHealthy: %v", err)
			}
			for _, s := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), s) {
					t.Errorf("error %v, want it to say %q", err, s)
				}
			}
			if tt.wantFailed != nil {
				var ue *UnhealthyError
				if !errors.As(err, &ue) || !slices.Equal(ue.Components(), tt.wantFailed) {
					t.Errorf("error %#v, want an UnhealthyError naming %v", err, tt.wantFailed)
				}
			}
			if took != tt.wantTook {
				t.Errorf("took %s on the clock, want %s", took, tt.wantTook)
			}
			if !slices.Equal(progress, tt.wantProgress) {
				t.Errorf("progress %q, want %q", progress, tt.wantProgress)
			}
			// A check that passed is not run again.
			for _, c := range tt.comps {
				if c.healthyAt == 0 && c.calls != 1 {
					t.Errorf("%s checked %d times, want once", c.name, c.calls)
				}
			}
		})
	}
}

func TestWaitHealthyCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	checks := []HealthCheck{{Component: "kube-apiserver", What: "/readyz", Check: func(context.Context) error { return errors.New("refused") }}}
	err := WaitHealthy(ctx, checks, WaitOptions{Timeout: time.Minute})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "kube-apiserver /readyz") {
		t.Errorf("canceled wait: %v, want context.Canceled naming what it waited for", err)
	}
	if err := WaitHealthy(context.Background(), checks, WaitOptions{}); err == nil {
		t.Error("a wait without a timeout: no error")
	}
}

func TestLeaseLive(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	holder, empty := "kcm_1", ""
	renewed := func(ago time.Duration) *metav1.MicroTime { t := metav1.NewMicroTime(now.Add(-ago)); return &t }
	secs := int32(15)
	tests := []struct {
		name   string
		holder *string
		renew  *metav1.MicroTime
		want   string // "" when live
	}{
		{"live", &holder, renewed(2 * time.Second), ""},
		{"no lease holder", nil, nil, "no holder"},
		{"empty holder", &empty, renewed(time.Second), "no holder"},
		{"never renewed", &holder, nil, "never renewed"},
		{"expired", &holder, renewed(20 * time.Second), "expired"},
	}
	for _, tt := range tests {
		err := leaseLive(tt.holder, tt.renew, &secs, now)
		if (tt.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestProbe: a /readyz that fails names its first failed check.
func TestProbe(t *testing.T) {
	ready := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		if !ready {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, "[+]ping ok\n[-]poststarthook/start-apiextensions-controllers failed: reason withheld\nreadyz check failed\n")
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	c := probe(MetricsEndpoint{Component: "kube-apiserver", URL: srv.URL + "/metrics", Client: srv.Client()}, "/readyz")
	err := c.Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "HTTP 500: [-]poststarthook/start-apiextensions-controllers failed") {
		t.Errorf("failing /readyz: %v", err)
	}
	ready = true
	if err := c.Check(context.Background()); err != nil {
		t.Errorf("ready /readyz: %v", err)
	}
}
