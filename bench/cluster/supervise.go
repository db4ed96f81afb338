package cluster

import (
	"context"
	"fmt"
	"maps"
	"time"

	"k8s.io/utils/clock"
)

// A component of the control plane that exits is started again after a
// back-off, as the kubelet of a control-plane node restarts its static pods.

// Supervise watches the cluster's component processes, every second on
// clk, until stop: a component that exits, and one that comes back, is
// logged with logf and noted, so a run's result says what happened (its
// measurements mark the gap in their own series). The returned stop waits
// for the watcher and returns those notes.
func (e *Embedded) Supervise(ctx context.Context, clk clock.Clock, logf func(format string, args ...any)) (stop func() []string) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var notes []string
	go func() {
		defer close(done)
		down := map[string]time.Time{}
		// A component that exits is started again after a back-off, as
		// the kubelet of a kubeadm control-plane node restarts its static
		// pods (CrashLoopBackOff: 10 s, doubling to 5 minutes).
		exits := map[string]int{}
		retryAt := map[string]time.Time{}
		last := e.PIDs()
		for {
			select {
			case <-ctx.Done():
				return
			case <-clk.After(time.Second):
			}
			now := clk.Now()
			pids := e.PIDs()
			for name, pid := range last {
				alive := ProcessAlive(pids[name])
				_, wasDown := down[name]
				switch {
				case !alive && !wasDown:
					down[name] = now
					exits[name]++
					retryAt[name] = now.Add(crashLoopBackOff(exits[name]))
					msg := fmt.Sprintf("%s (pid %d) exited during the storm at %s (starting it again in %s); log: %s", name, pid, now.Format(time.RFC3339), crashLoopBackOff(exits[name]), e.LogPath(name))
					notes = append(notes, msg)
					logf("%s", msg)
				case alive && wasDown:
					msg := fmt.Sprintf("%s came back (pid %d) after %s", name, pids[name], now.Sub(down[name]).Round(time.Second))
					delete(down, name)
					notes = append(notes, msg)
					logf("%s", msg)
				}
			}
			for name := range down {
				if now.Before(retryAt[name]) || ProcessAlive(pids[name]) {
					continue
				}
				if err := e.Start(ctx); err != nil && ctx.Err() == nil {
					logf("starting %s again: %v", name, err)
				}
				// Checked at the next tick; if it did not come up, the
				// next step of the back-off.
				exits[name]++
				retryAt[name] = clk.Now().Add(crashLoopBackOff(exits[name]))
			}
			maps.Copy(last, pids)
		}
	}()
	return func() []string {
		cancel()
		<-done
		return notes
	}
}

// crashLoopBackOff is the kubelet's restart back-off of a container that
// exited for the nth time: 10 s, doubling, at most 5 minutes
// (pkg/kubelet/kubelet.go backOffPeriod, MaxCrashLoopBackOff).
func crashLoopBackOff(n int) time.Duration {
	d := 10 * time.Second
	for i := 1; i < n && d < 5*time.Minute; i++ {
		d *= 2
	}
	return min(d, 5*time.Minute)
}
