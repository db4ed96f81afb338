// Package kubelet models what a node's kubelet sends to the API server when
// the kubelet, its container runtime or the whole node restarts. While a node
// restarts, stormbench *is* that node's kubelet: every request goes out under
// the node's identity (user system:node:<name>, group system:nodes) with the
// kubelet's client settings, so the Node authorizer, NodeRestriction and API
// Priority and Fairness treat it as kubelet traffic.
//
// The request pattern follows the kubelet in k8s.io/kubernetes v1.36.3,
// pkg/kubelet; REQUESTS.md lists it with its sources and what the oracle
// measured. A kubelet of another supported version (Config.Version) differs
// as data: its feature gates' defaults (bench/kubeversion) and what else its
// start-up does differently (release.go); testdata/versions/<version> holds
// its request goldens.
//
// # Shape
//
// Simulator.Restart (model.go) takes the node from KWOK (harness.go) and
// runs the restart's kind: runtimeRestart (runtime.go), or kubeletRestart
// and reboot, which end in boot (boot.go). What a restart does is decided
// apart from doing it, but for what hangs on the API server's answers
// (below):
//
//   - a planner decides, touching nothing: planRuntimeOutage (runtime.go)
//     for a runtime outage; planProcessStart (boot.go) for a starting
//     kubelet's process start-up, from its exec to its first request;
//     planNodeStart (boot.go) for its node-level start-up once its
//     informers have synced (first node status, CSINode, ResourceSlice
//     wipe, start-up events); planProbes (probes.go) for the probe
//     workers' and the status manager's writes after a kubelet's start,
//     from the pods' first sync (pods.go startPods, podrestarts.go). A
//     plan (plan.go) is a list of typed Steps: when (At), which of the
//     kubelet's loops (Actor: the node status loop or the pods' workers
//     and status manager) and what (Action, a closed set: node status,
//     node event, pod event, pod status, startup step, first probe, legacy
//     flip, CSINode, ResourceSlice wipe, wait);
//   - the executor (play.go) plays a plan on the kubelet's session: each
//     actor in a goroutine of its own, sleeping on the injected clock until
//     a step is due, sending it with the session's retries and counting
//     what it sent;
//   - every pod status goes out through the one status manager
//     (statusmanager.go): a sync of one pod (GET, merge, PATCH when
//     changed) whose PATCHes it counts, batches of the updates handed over
//     while it was busy, and whether it was busy when a legacy flip's
//     Failure and Success came (then one write). The kubelet coalesces
//     both ways with one mechanism (syncBatch); here the flip's two
//     updates are not batch updates, since a batch would put an offset
//     between them that the request goldens, measured on the real
//     kubelet, do not have.
//
// The rest of a start hangs on the API server's answers and is played as
// it is decided: registration (the node GET decides whether to create
// it), the informers' lists and watches (they decide the pods), volume
// reconstruction, the Secret and ConfigMap watches and tokens of the pods
// listed, and each pod's first sync, whose GET decides a legacy flip
// (boot.go startNode, session.go, informers.go, pods.go).
// testdata/plan holds the plans' goldens (TestPlanGolden,
// TestNodeStartPlanGolden, TestProbePlanGolden), testdata/restart every
// request a restart sends on a fake API server (TestRestartGolden).
package kubelet
