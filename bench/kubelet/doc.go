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
// start-up does differently (plan.Release); testdata/versions/<version> holds
// its request goldens.
//
// # Shape
//
// Simulator.Restart (model.go) takes the node from KWOK (harness.go) and
// runs the restart's kind: runtimeRestart (runtime.go), or kubeletRestart
// and reboot, which end in boot (boot.go). A start is a handshake, one
// plan and one play: after the process start-up (plan.ProcessStart), the
// handshake hangs on the API server's answers and is played as it comes
// (registration: the node GET decides whether to create it; the
// informers' lists and watches, which decide the pods; volume
// reconstruction: boot.go handshake, session.go, informers.go); everything
// after it is one plan.
//
//   - a planner of package plan decides, touching nothing: plan.Start for a
//     kubelet's start once its informers have synced, from the node, the
//     pods as listed, the containers that exited, the gate, the release
//     and the seed: the node-level start-up, the pods' watches and
//     tokens, each pod's first sync with its decision as data (a reboot's
//     and a replaced pod's statuses too), the deleted pods' ends, the
//     probes' and the status manager's writes that follow, and a
//     NotReady flash's end; plan.RuntimeOutage for a runtime outage. A
//     plan (plan.Plan) is a list of typed Steps of data: when (At,
//     from a Mark the executor reaches: the start, the pods' first syncs,
//     their end), which of the kubelet's loops (Actor: the node status
//     loop or the pods' workers and status manager) and what (Action, a
//     closed set);
//   - the executor (play.go, this package) plays a plan on the kubelet's
//     session, and imports only the plan's data and planners: each
//     actor in a goroutine of its own, sleeping on the injected clock until
//     a step is due, sending it with the session's retries, applying a
//     first sync's decision to the status it reads, and counting what it
//     sent;
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
// testdata/plan holds the plans' goldens (TestPlanGolden,
// TestNodeStartPlanGolden, TestStartPlanGolden: the planners run on this
// package's fixture of pods, so they stay beside the request goldens that
// the calibration's fingerprint covers), testdata/restart every
// request a restart sends on a fake API server (TestRestartGolden).
package kubelet
