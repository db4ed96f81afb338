package kubelet

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stormbench/stormbench/bench/kubelet/plan"
	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/bench/testutil"
)

// TestPlanGolden runs the planners alone, with no API server and no clock,
// and compares their plans with testdata/plan/<case>.golden: every step the
// simulated kubelet will take, when, and with what. The request goldens
// (TestRestartGolden) show what playing the same plans sends; these show
// what was decided, across the cases a request golden would take a storm
// of each to reach. go test -update rewrites them; review the diff as a
// change of the model.
func TestPlanGolden(t *testing.T) {
	f := newRestartFixture(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var pods []corev1.Pod
	for _, p := range f.pods {
		pods = append(pods, *p)
	}
	s := &Simulator{cfg: Config{Seed: 7}} // TestRestartGolden's
	for _, tc := range []struct {
		name string
		o    plan.Outage
	}{
		// The request golden's case (the same seed): the version Unknown
		// at 5 s, NotReady at 35 s, back at 69 s.
		{"runtime-refused", plan.Outage{Downtime: time.Minute, Version: "kwok-0.8.0"}},
		// A runtime with a type keeps it in the Unknown version.
		{"runtime-refused-containerd", plan.Outage{Downtime: time.Minute, Version: "containerd://2.1.4"}},
		// Over before the node status could see it down: the version
		// goes Unknown and comes back; the node stays Ready.
		{"runtime-refused-short", plan.Outage{Downtime: 20 * time.Second, Version: "kwok-0.8.0"}},
		// Too short for the version's status sync: nothing but probe
		// events, and no status to take back.
		{"runtime-refused-blip", plan.Outage{Downtime: 4 * time.Second, Version: "kwok-0.8.0"}},
		// Long enough for two garbage collections.
		{"runtime-refused-long", plan.Outage{Downtime: 130 * time.Second, Version: "kwok-0.8.0"}},
		// No version on record: no Unknown to report.
		{"runtime-refused-no-version", plan.Outage{Downtime: time.Minute}},
		// A hung runtime (the request golden's case): NotReady at 47.8 s,
		// and no probe records an event (they block).
		{"runtime-hung", plan.Outage{Hung: true, Downtime: time.Minute, Version: "kwok-0.8.0"}},
		// A hang over before the status sync gives up (45 s at the
		// least): nothing to send.
		{"runtime-hung-short", plan.Outage{Hung: true, Downtime: 40 * time.Second, Version: "kwok-0.8.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.Node, o.Pods = f.node, pods
			rng := s.rng(f.node, 2)
			rng.Float64() // the lease controller's phase (runtimeRestart)
			steps := plan.RuntimeOutage(o, rng, s.rng(f.node, 4))
			checkPlan(t, steps, o.Downtime)
			var b strings.Builder
			fmt.Fprintf(&b, "# %s: hung %t, downtime %v, runtime version %q, seed 7\n", tc.name, o.Hung, o.Downtime, o.Version)
			b.WriteString(steps.String())
			testutil.Golden(t, "plan/"+tc.name+".golden", []byte(b.String()))
		})
	}
}

// checkPlan checks what holds for every runtime outage's plan: steps in
// time order; every pod event series counted 1, 2, 3, … in order; a
// NotReady node status followed by its event at the same offset; the last
// step at or after the outage's end, and Ready again if the node went
// NotReady or its version Unknown.
func checkPlan(t *testing.T, steps plan.Plan, downtime time.Duration) {
	t.Helper()
	if len(steps) == 0 {
		t.Fatal("empty plan")
	}
	counts := map[string]int32{}
	unknown, down := false, false
	for i, st := range steps {
		if i > 0 && st.At < steps[i-1].At {
			t.Errorf("step %d (%v) before the one ahead of it (%v)", i, st, steps[i-1])
		}
		switch st.Action {
		case plan.ActionPodEvent:
			counts[st.Series]++
			if st.Count != counts[st.Series] {
				t.Errorf("step %d (%v): count %d, want %d", i, st, st.Count, counts[st.Series])
			}
			if st.At >= downtime {
				t.Errorf("step %d (%v): a probe errored after the runtime was back", i, st)
			}
		case plan.ActionNodeStatus:
			if !st.Ready {
				down = true
				if i+1 >= len(steps) || steps[i+1].Reason != "NodeNotReady" || steps[i+1].At != st.At {
					t.Errorf("step %d (%v): NotReady without its NodeNotReady event", i, st)
				}
			}
			if strings.HasSuffix(st.RuntimeVersion, "Unknown") {
				unknown = true
			}
		}
	}
	last := steps[len(steps)-1]
	if last.At < downtime {
		t.Errorf("plan ends at %v, before the outage's end %v", last.At, downtime)
	}
	if (unknown || down) && !slicesContainsReady(steps[len(steps)-2:]) {
		t.Errorf("the node went NotReady or Unknown and the plan does not end Ready again:\n%v", steps)
	}
}

func slicesContainsReady(steps []plan.Step) bool {
	for _, st := range steps {
		if st.Action == plan.ActionNodeStatus && st.Ready && !strings.HasSuffix(st.RuntimeVersion, "Unknown") {
			return true
		}
	}
	return false
}

// TestStartPlanGolden plans a kubelet's start once its informers have
// synced (plan.Start) on the fixture's pods, and compares the plan with
// testdata/plan/<case>.golden; each is also checked by rule: the node
// actor's steps in the kubelet's order, every first sync between the
// pods' marks, and the pods actor counting from them.
func TestStartPlanGolden(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		// legacy is ChangeContainerStatusOnKubeletRestart.
		legacy, rebooted bool
		// exited: web-1's app exited while the kubelet was down.
		exited bool
		// deleted: agent-n1 was deleted while the kubelet was away.
		deleted bool
		flash   time.Duration
	}{
		{name: "restart-legacy", legacy: true},
		{name: "restart-preserve"},
		{name: "restart-reboot", rebooted: true},
		{name: "restart-exited-flash", exited: true, flash: 2 * time.Second},
		{name: "restart-deleted", deleted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newRestartFixture(t0)
			in := plan.StartInput{
				Start: plan.NodeStart{Node: f.node}, NodeObj: &corev1.Node{}, Pods: f.pods,
				Rebooted: tc.rebooted, InitDuration: tc.flash, Legacy: tc.legacy, Release: plan.ReleaseOf(kubeversion.Default), Seed: plan.Seed{Value: 7},
			}
			if tc.flash > 0 {
				in.Start.Flash = true
			}
			if tc.exited {
				in.Exited = map[string][]string{"ns/web-1": {"app"}}
			}
			if tc.deleted {
				in.Pods, in.Deleted = f.pods[:3], f.pods[3:]
			}
			steps := plan.Start(in)
			var b strings.Builder
			fmt.Fprintf(&b, "# %s: legacy %t, rebooted %t, exited %t, deleted %t, flash %s, seed 7\n", tc.name, tc.legacy, tc.rebooted, tc.exited, tc.deleted, tc.flash)
			b.WriteString(steps.String())
			testutil.Golden(t, "plan/"+tc.name+".golden", []byte(b.String()))
			var marks []plan.Mark
			for _, st := range steps {
				switch {
				case st.Action == plan.ActionMark:
					marks = append(marks, st.Mark)
				case st.Action == plan.ActionPodFirstSync || st.Action == plan.ActionPodReject || st.Action == plan.ActionPodObservedGeneration:
					if !slices.Equal(marks, []plan.Mark{plan.MarkPodSync}) || st.Actor != plan.ActorNode {
						t.Errorf("step %s: a first sync on the %s actor after marks %v, want the node actor's, between pod sync and syncs done", st, st.Actor, marks)
					}
				case st.Actor == plan.ActorPods && st.From == plan.MarkPlan:
					t.Errorf("step %s: the pods actor counts from the start of the plan, not from the first syncs", st)
				}
			}
			if !slices.Equal(marks, []plan.Mark{plan.MarkPodSync, plan.MarkSyncsDone}) {
				t.Errorf("marks %v, want pod sync then syncs done", marks)
			}
		})
	}
}

// TestNodeStartPlanGolden: the node-level start-up after the informers'
// sync, for a kubelet restart, one with the NotReady flash, and a reboot;
// each also checked by rule.
func TestNodeStartPlanGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   plan.NodeStart
	}{
		{"start-kubelet", plan.NodeStart{Node: "node-0"}},
		{"start-flash", plan.NodeStart{Node: "node-0", Flash: true}},
		{"start-reboot", plan.NodeStart{Node: "node-0", BootID: "0f1e2d3c-4b5a-4697-8877-665544332211"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The node-level start-up: a start's steps before the pods'
			// object watches.
			steps := plan.Start(plan.StartInput{Start: tc.in})
			steps = steps[:slices.IndexFunc(steps, func(st plan.Step) bool { return st.Action == plan.ActionObjectWatches })]
			if len(steps) == 0 || steps[0].Action != plan.ActionNodeStatus || steps[0].Ready == tc.in.Flash {
				t.Fatalf("the first step is not the node status, Ready %t:\n%s", !tc.in.Flash, steps)
			}
			var events []string
			for _, st := range steps {
				if st.At != 0 || st.Actor != plan.ActorNode {
					t.Errorf("step %s: want every step at once, of the node actor", st)
				}
				if st.Action == plan.ActionNodeEvent {
					events = append(events, st.Reason)
				}
			}
			if events[0] != "Starting" || slices.Contains(events, "Rebooted") != (tc.in.BootID != "") {
				t.Errorf("events %v: want Starting first, and Rebooted only after a reboot", events)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "# %s: flash %t, boot id %q\n", tc.name, tc.in.Flash, tc.in.BootID)
			b.WriteString(steps.String())
			testutil.Golden(t, "plan/"+tc.name+".golden", []byte(b.String()))
		})
	}
}
