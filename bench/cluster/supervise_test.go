package cluster

import (
	"testing"
	"time"
)

func TestCrashLoopBackOff(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 10 * time.Second, 2: 20 * time.Second, 3: 40 * time.Second, 6: 5 * time.Minute, 7: 5 * time.Minute, 40: 5 * time.Minute} {
		if got := crashLoopBackOff(n); got != want {
			t.Errorf("exit %d: back-off %s, want %s", n, got, want)
		}
	}
}
