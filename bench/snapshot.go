package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/bench/measure/apiserver"
	"github.com/stormbench/stormbench/bench/poll"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

// A run's storms start from one fleet: saved once it is provisioned and
// restored into the embedded cluster before each storm (isolate), or a
// fleet snapshot restored for a run or a command (RestoreFleet).

// SnapshotWant is what a fleet snapshot must be to be restored for profile
// p: made by this stormbench, for p, from p's fleet section (the SHA-256 of
// its resolved fleet section), on p's Kubernetes version.
func SnapshotWant(p *profiles.Profile) cluster.SnapshotMeta {
	b, _ := json.Marshal(p.Fleet)
	sum := sha256.Sum256(b)
	return cluster.SnapshotMeta{ToolVersion: Version, Profile: p.Metadata.Name, FleetDigest: hex.EncodeToString(sum[:]), KubeVersion: p.KubeVersion().String()}
}

// Restored is what restoring a fleet snapshot took.
type Restored struct {
	// Meta is the snapshot's metadata.
	Meta cluster.SnapshotMeta
	// Target is the restored cluster, connected.
	Target *cluster.Target
	// Restore is the etcd data's swap with the cluster stopped and started
	// again; Settle the wait until every node and pod of the fleet was
	// Ready again.
	Restore, Settle time.Duration
}

// RestoreFleet restores the fleet snapshot file into the embedded cluster
// emb, starting the cluster first when it does not exist, with the control
// plane of Kubernetes version into (zero: the cluster's; a newer one is an
// upgrade on the same etcd data), and waits until the API server serves
// that version, every node and pod of the fleet is Ready again, and the API
// request rate is steady (the profile's measurements.apiserver
// .restoreSettle). progress receives the fleet's readiness; logf one line
// per step.
func RestoreFleet(ctx context.Context, emb *cluster.Embedded, p *profiles.Profile, file string, into kubeversion.Version, progress fleet.Progress, logf func(string, ...any)) (r Restored, err error) {
	if !emb.Exists() {
		logf("Starting embedded cluster %q (Kubernetes %s, 127.0.0.1 only)", emb.Name(), emb.KubeVersion())
		if err := emb.Up(ctx); err != nil {
			return r, err
		}
	}
	// The restore's waits and timings are the real clock's (the
	// components run on it).
	clk := clock.RealClock{}
	start := clk.Now()
	if r.Meta, err = emb.RestoreSnapshot(ctx, file, SnapshotWant(p), into); err != nil {
		return r, err
	}
	r.Restore = clk.Since(start)
	if r.Target, err = waitServing(ctx, emb, p); err != nil {
		return r, fmt.Errorf("the restored cluster: %w", err)
	}
	if err := emb.KubeVersion().CheckServer(r.Target.ServerVersion, true); err != nil {
		return r, fmt.Errorf("the restored cluster: %w", err)
	}
	// Up on a fleet that exists creates nothing (every object is there)
	// and waits until its nodes and pods are Ready: KWOK renewing the
	// restored leases, the controllers catching up.
	f, err := fleet.New(r.Target.Client, r.Meta.RunID, p.Fleet, progress)
	if err != nil {
		return r, err
	}
	start = clk.Now()
	if err := f.Up(ctx); err != nil {
		return r, fmt.Errorf("waiting for the restored fleet: %w", err)
	}
	// A component that exited while the API server settled (the
	// controller manager gives it 10 s) is started again, and the fleet
	// waited for once more with it leading.
	restarted, err := emb.EnsureRunning(ctx)
	if err != nil {
		return r, fmt.Errorf("the restored cluster: %w", err)
	}
	if len(restarted) > 0 {
		logf("Started %s again: exited while the restored API server settled", strings.Join(restarted, ", "))
		if err := waitLeaders(ctx, r.Target, restarted, clk.Now(), 2*time.Minute); err != nil {
			return r, fmt.Errorf("the restored cluster: %w", err)
		}
		if err := f.WaitReady(ctx, p.Fleet.ReadyTimeout.Duration); err != nil {
			return r, fmt.Errorf("waiting for the restored fleet: %w", err)
		}
	}
	r.Settle = clk.Since(start)
	// Ready is not settled: the controllers relist and resync the restored
	// objects for a while after the fleet is Ready, and a baseline taken
	// then makes every figure relative to it wrong (it showed as negative
	// excess requests per restart). Wait until the request rate is steady.
	if src, ok := apiserverSource(Options{Embedded: emb, Target: r.Target}); ok {
		quiet, err := apiserver.WaitSettled(ctx, src, clk, RestoreSettle(p))
		if err != nil {
			return r, fmt.Errorf("the restored cluster: %w", err)
		}
		logf("Restored cluster: %s", quiet)
	}
	return r, nil
}

// RestoreSettle is the rule a restored cluster's request rate must meet
// before the next storm: the profile's measurements.apiserver.restoreSettle,
// or WaitSettled's default (4 windows of 10 s); WaitSettled chooses the
// scrape interval from the window.
func RestoreSettle(p *profiles.Profile) apiserver.SettleOptions {
	var o apiserver.SettleOptions
	if m := p.Measurements.APIServer; m != nil && m.RestoreSettle != nil {
		o.Window = m.RestoreSettle.Window.Duration
		o.Windows = m.RestoreSettle.Windows
	}
	return o
}

// waitServing connects to the embedded cluster once its API server serves
// again (a restore or a save restarts it).
func waitServing(ctx context.Context, emb *cluster.Embedded, p *profiles.Profile) (*cluster.Target, error) {
	var t *cluster.Target
	w := poll.Wait{Interval: 500 * time.Millisecond, Timeout: 2 * time.Minute, What: "waiting for the API server to serve"}
	err := w.Until(ctx, func(ctx context.Context) (bool, string, error) {
		var err error
		t, err = cluster.Connect(ctx, cluster.ConnectOptions{Kubeconfig: emb.ClientKubeconfig(), QPS: p.Fleet.QPS, Burst: p.Fleet.Burst, Timeout: 10 * time.Second})
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
	return t, err
}

// SaveFleet saves the embedded cluster's etcd, holding the fleet of run
// runID (nodes nodes, pods pods), to file, and waits until the API server
// serves again: the copy is taken with the cluster stopped.
func SaveFleet(ctx context.Context, emb *cluster.Embedded, p *profiles.Profile, file, runID string, nodes, pods int) (*cluster.Target, error) {
	meta := SnapshotWant(p)
	meta.RunID, meta.Nodes, meta.Pods, meta.APF = runID, nodes, pods, emb.APFMode()
	// SaveSnapshot renames over file: a link's target, never the link.
	if err := emb.SaveSnapshot(ctx, file, meta); err != nil {
		return nil, err
	}
	t, err := waitServing(ctx, emb, p)
	if err != nil {
		return nil, fmt.Errorf("after the snapshot: %w", err)
	}
	return t, nil
}

// waitLeaders waits until the restarted kube-controller-manager and
// kube-scheduler renew their leader leases after since: a restarted one
// takes its lease over once the restored holder's expires.
func waitLeaders(ctx context.Context, t *cluster.Target, restarted []string, since time.Time, timeout time.Duration) error {
	for _, name := range restarted {
		if name != "kube-controller-manager" && name != "kube-scheduler" {
			continue
		}
		w := poll.Wait{Interval: 500 * time.Millisecond, Timeout: timeout, What: "waiting for " + name + " to renew its leader lease after the restart"}
		err := w.Until(ctx, func(ctx context.Context) (bool, string, error) {
			l, err := t.Client.CoordinationV1().Leases(metav1.NamespaceSystem).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			return l.Spec.RenewTime != nil && l.Spec.RenewTime.After(since), "last renewed before the restart", nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// isolation is how a run keeps its storms from inheriting each other's
// state: save (nil when the fleet came from Options.FromSnapshot) saves the
// provisioned fleet, reset restores it before a storm, with the control
// plane of the storm's Kubernetes version; cleanup removes what save wrote.
type isolation struct {
	mode    string
	save    func(ctx context.Context) error
	reset   func(ctx context.Context, into kubeversion.Version) (time.Duration, error)
	cleanup func()
}

// isolate decides how the run's storms start from the same fleet
// (result.Run.Isolation). With more than one storm, or a storm of another
// Kubernetes version than the cluster's, on an embedded cluster, and
// Options.RestoreEach, the fleet is saved after provisioning and restored
// before every storm (with Options.FromSnapshot, that snapshot before every
// storm after the first), unless the run is a shard. An existing cluster,
// or real kubelets (their state is not in etcd), cannot be restored: the
// result says the storms were not isolated.
func isolate(o Options, f *fleet.Fleet) (isolation, error) {
	iso := isolation{cleanup: func() {}}
	p := o.Profile
	if Storms(p, len(o.SweepWaveSizes)) <= 1 && !p.ComparesVersions() {
		return iso, nil
	}
	iso.mode = result.IsolationNone
	switch {
	case o.Embedded == nil:
		o.Logf("Storms are not isolated: on an existing cluster each starts from the state the previous one left")
		return iso, nil
	case !o.RestoreEach || o.ShardCount > 1:
		return iso, nil
	case p.Fleet.RealKubelets > 0:
		o.Logf("Storms are not isolated: the profile's %d real kubelets keep their own state outside the fleet snapshot", p.Fleet.RealKubelets)
		return iso, nil
	}
	iso.mode = result.IsolationRestored
	file := o.FromSnapshot
	if file == "" {
		dir, err := os.MkdirTemp("", "stormbench-fleet-")
		if err != nil {
			return iso, fmt.Errorf("a directory for the fleet snapshot: %w", err)
		}
		iso.cleanup = func() { _ = os.RemoveAll(dir) }
		file = filepath.Join(dir, o.RunID+".snap")
		iso.save = func(ctx context.Context) error {
			start := time.Now()
			if _, err := SaveFleet(ctx, o.Embedded, p, file, o.RunID, p.Fleet.Nodes, f.Plan().ExpectedPods); err != nil {
				return err
			}
			o.Logf("Fleet saved to %s in %s", file, time.Since(start).Round(100*time.Millisecond))
			return nil
		}
	}
	iso.reset = func(ctx context.Context, into kubeversion.Version) (time.Duration, error) {
		start := time.Now()
		r, err := RestoreFleet(ctx, o.Embedded, p, file, into, o.Progress, o.Logf)
		took := time.Since(start)
		if err != nil {
			return took, err
		}
		o.Logf("Snapshot restored in %s; fleet Ready %s later; %s in all", r.Restore.Round(100*time.Millisecond), r.Settle.Round(100*time.Millisecond), took.Round(100*time.Millisecond))
		return took, nil
	}
	return iso, nil
}

// errNeedsSnapshot is a run of variants on other Kubernetes versions than
// the profile's that cannot restore its fleet into their control planes.
var errNeedsSnapshot = errors.New("variants of other Kubernetes versions than the profile's restore the fleet into each version's control plane: they need the embedded cluster with its fleet snapshot restored before each storm (Options.RestoreEach; not --kubeconfig, --no-restore or --shard)")
