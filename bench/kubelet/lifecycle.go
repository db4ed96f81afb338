package kubelet

// NodeLifecycle is told when the simulator takes a node's kubelet or the
// node itself down and when it hands the node back to KWOK, so that what
// stands for the node's processes outside the simulator (the fleet's steady
// watches, bench/watchers) can follow. Either hook may be nil.
type NodeLifecycle struct {
	// NodeDown is called when the downtime of a kubelet restart or a reboot
	// begins (the kubelet, or the whole node, stops). A runtime restart
	// does not call it: the kubelet stays up.
	NodeDown func(node string)
	// NodeUp is called when the node is back with KWOK after its restart,
	// of any kind, and also after a failed or interrupted one.
	NodeUp func(node string)
}

func (l NodeLifecycle) down(node string) {
	if l.NodeDown != nil {
		l.NodeDown(node)
	}
}

func (l NodeLifecycle) up(node string) {
	if l.NodeUp != nil {
		l.NodeUp(node)
	}
}
