package plan

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"
	"time"
)

// TestProcessStartPlan: a kubelet's process start-up is the same for a
// node and seed every time, within its bounds,
// and spread over them across nodes with the measured median (0.32 s on
// containerd, restarts staggered).
func TestProcessStartPlan(t *testing.T) {
	s := Seed{Value: 7}
	var waits []time.Duration
	for i := range 1000 {
		node := fmt.Sprintf("node-%05d", i)
		at := ProcessStart(s.Rng(node, 7))
		if again := ProcessStart(s.Rng(node, 7)); again != at {
			t.Fatalf("%s: %v, then %v: not decided by the seed", node, at, again)
		}
		if at < processStartMin || at >= processStartMin+processStartSpread {
			t.Errorf("%s: start-up %v outside [%v, %v)", node, at, processStartMin, processStartMin+processStartSpread)
		}
		waits = append(waits, at)
	}
	slices.Sort(waits)
	if med := waits[len(waits)/2]; med < 300*time.Millisecond || med > 360*time.Millisecond {
		t.Errorf("median start-up %v, want about 0.32 s", med)
	}
}

func TestStartupEvents(t *testing.T) {
	if n := len(startupEvents("n1", "")); n < 5 || n > 8 {
		t.Errorf("%d start-up events, the reference says about 5-8", n)
	}
	ev := startupEvents("n1", "0f0e-boot")
	if ev[len(ev)-1].reason != "Rebooted" {
		t.Errorf("a rebooted node records Rebooted last, got %v", ev)
	}
}

func TestBootID(t *testing.T) {
	id := BootID(rand.New(rand.NewPCG(1, 2)))
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(id) {
		t.Errorf("boot ID %q is not a version 4 UUID", id)
	}
	if id == BootID(rand.New(rand.NewPCG(1, 3))) {
		t.Error("two seeds gave one boot ID")
	}
}
