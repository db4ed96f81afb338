// Package clustertest starts real embedded clusters for tests and
// benchmarks, and guarantees they are torn down, even when a test fails.
package clustertest

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/profiles"
)

// Cluster is a running embedded cluster and a connection to it.
type Cluster struct {
	*cluster.Embedded
	Target *cluster.Target
}

var (
	mu     sync.Mutex
	active = map[*cluster.Embedded]bool{}
	once   sync.Once
	// reapOnce removes orphaned clusters once per test process.
	reapOnce sync.Once
)

// downOnSignal tears down every cluster still up when the test binary is
// interrupted, so an aborted `go test` leaves no processes behind.
func downOnSignal() {
	once.Do(func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		go func() {
			<-ch
			mu.Lock()
			for e := range active {
				_ = e.Down(context.Background())
			}
			mu.Unlock()
			os.Exit(130)
		}()
	})
}

// Option adjusts the embedded cluster's options before it starts.
type Option func(*cluster.EmbeddedOptions)

// WithAuditLog starts the API server with its Metadata-level audit log.
func WithAuditLog() Option { return func(o *cluster.EmbeddedOptions) { o.AuditLog = true } }

// Start starts an embedded cluster with the profile's timing and control
// plane settings (nil: defaults) and registers its teardown with tb.Cleanup.
// Without built components it fails the test with a message naming
// `make components`; with -short it skips instead.
func Start(tb testing.TB, p *profiles.Profile, opts ...Option) *Cluster {
	tb.Helper()
	if testing.Short() {
		tb.Skip("integration test: skipped in -short mode")
	}
	stopShared(nil)
	c, stop, err := start("sbt", "the test's own", tb.Logf, func(dir string, _ error) bool {
		if tb.Failed() {
			tb.Logf("embedded cluster files kept in %s", dir)
		}
		return tb.Failed()
	}, p, opts...)
	if stop != nil {
		tb.Cleanup(func() {
			if err := stop(); err != nil {
				tb.Errorf("tearing down embedded cluster: %v", err)
			}
		})
	}
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// LogTail returns the last lines of a component's log, for failure messages.
func (c *Cluster) LogTail(component string, lines int) string {
	data, err := os.ReadFile(c.LogPath(component))
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return filepath.Base(c.LogPath(component)) + ":\n" + strings.Join(all, "\n")
}

// start starts an embedded cluster named prefix-<pid>-<n> in a new
// temporary directory prefix-*, torn down on SIGINT/SIGTERM too, and logs
// its boot time with logf, saying whose it is. stop, non-nil once the
// cluster exists (even when it failed to start), tears it down and reports
// a failed teardown: an error from Down, or a component process that
// survived it; the directory is removed unless keep, given it and that
// error, says otherwise. Start registers stop at once, Shared's cluster
// outlives any one test.
func start(prefix, whose string, logf func(string, ...any), keep func(dir string, downErr error) bool, p *profiles.Profile, opts ...Option) (c *Cluster, stop func() error, err error) {
	comps, err := cluster.FindComponentsFor("", kubeversion.Version{})
	if err != nil {
		return nil, nil, fmt.Errorf("integration tests need the control-plane components: %w", err)
	}
	reapOnce.Do(func() { reapOrphans(comps) })
	p = cmp.Or(p, &profiles.Profile{})
	profiles.SetDefaults(p)
	name := fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), time.Now().UnixNano()%1_000_000)
	// Unix socket and path limits: keep the work directory short.
	dir, err := os.MkdirTemp("", prefix+"-")
	if err != nil {
		return nil, nil, err
	}
	eo := cluster.EmbeddedOptions{Name: name, WorkDir: dir, Components: comps, Timing: p.Timing, ControlPlane: p.ControlPlane}
	for _, o := range opts {
		o(&eo)
	}
	e, err := cluster.NewEmbedded(eo)
	if err != nil {
		return nil, nil, err
	}
	downOnSignal()
	mu.Lock()
	active[e] = true
	mu.Unlock()
	stop = func() error {
		err := down(e)
		mu.Lock()
		delete(active, e)
		mu.Unlock()
		if !keep(dir, err) {
			_ = os.RemoveAll(dir)
		}
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	begin := time.Now()
	if err := e.Up(ctx); err != nil {
		return nil, stop, fmt.Errorf("starting embedded cluster: %w", err)
	}
	t, err := cluster.Connect(ctx, cluster.ConnectOptions{Kubeconfig: e.ClientKubeconfig(), QPS: p.Fleet.QPS, Burst: p.Fleet.Burst})
	if err != nil {
		return nil, stop, fmt.Errorf("connecting to embedded cluster: %w", err)
	}
	logf("cluster boot: %.1fs (%s, %s)", time.Since(begin).Seconds(), name, whose)
	return &Cluster{Embedded: e, Target: t}, stop, nil
}

// down tears an embedded cluster down and checks that none of its
// component processes survived.
func down(e *cluster.Embedded) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pids := e.PIDs()
	if err := e.Down(ctx); err != nil {
		return err
	}
	var alive []string
	for name, pid := range pids {
		if cluster.ProcessAlive(pid) {
			alive = append(alive, fmt.Sprintf("%s (pid %d)", name, pid))
		}
	}
	if len(alive) > 0 {
		return fmt.Errorf("component processes survived the teardown of %s: %s", e.Dir(), strings.Join(alive, ", "))
	}
	return nil
}

// reapOrphans removes embedded clusters left by test processes that died
// without running their cleanups (a `go test -timeout` panic skips
// t.Cleanup): work directories named sbt-*/sbb-* in the temp directory
// whose cluster name carries the pid of a process that no longer runs.
func reapOrphans(comps cluster.Components) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "sb[tb]-*"))
	for _, dir := range dirs {
		clusters, _ := os.ReadDir(filepath.Join(dir, "clusters"))
		if len(clusters) == 0 {
			continue
		}
		orphan := true
		for _, c := range clusters {
			parts := strings.Split(c.Name(), "-")
			if len(parts) < 2 {
				orphan = false
				continue
			}
			pid, err := strconv.Atoi(parts[1])
			if err != nil || pid == os.Getpid() || cluster.ProcessAlive(pid) {
				orphan = false
				continue
			}
			e, err := cluster.NewEmbedded(cluster.EmbeddedOptions{Name: c.Name(), WorkDir: dir, Components: comps})
			if err != nil {
				orphan = false
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			if err := e.Down(ctx); err != nil {
				orphan = false
			}
			cancel()
		}
		if orphan {
			_ = os.RemoveAll(dir)
		}
	}
}

// SkipUnlessRoot is for tests that need what only root has (containerd,
// cgroups, bridges): check reports what is missing, the test skips saying
// so, and under CI=true, where the machine must have it, it fails.
func SkipUnlessRoot(tb testing.TB, check func() error) {
	tb.Helper()
	if err := check(); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("CI=true: %v", err)
		}
		tb.Skip(err)
	}
}
