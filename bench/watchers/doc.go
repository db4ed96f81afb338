// Package watchers holds the fleet's steady watch population
// (fleet.steadyWatches): the watches every healthy node's kubelet and
// kube-proxy keep open for their lifetime, and which fan out every Service
// and EndpointSlice write in the API server. KWOK nodes have no such
// watchers of their own.
//
// Each watch is a raw streaming GET under the component's identity, read
// frame by frame without decoding its objects (frames.go), so that it costs
// the API server what a real watcher costs it and stormbench little. The
// population follows the storm through the simulator's node lifecycle
// (NodeDown and NodeUp, the simulator's kubelet.NodeLifecycle):
//
//	storm kind   kubelet watches                  kube-proxy watches
//	kubelet      closed from down to handback     held
//	runtime      held                             held
//	reboot       closed from down to handback     closed from down to handback, then resynced
//
// Its figures are a measurement (Name).
package watchers
