package kubelet

// NodeLifecycle is told when the simulator takes a node's kubelet or the
// node itself down and when it hands the node back to KWOK, so that what
// stands for the node's processes outside the simulator (the fleet's steady
// watches, bench/watchers) can follow.
type NodeLifecycle interface {
	// NodeDown is called when the downtime of a kubelet restart or a reboot
	// begins (the kubelet, or the whole node, stops). A runtime restart
	// does not call it: the kubelet stays up.
	NodeDown(node string)
	// NodeUp is called when the node is back with KWOK after its restart,
	// of any kind, and also after a failed or interrupted one.
	NodeUp(node string)
}

// nodeDown tells the lifecycle, if any, that node went down.
func (s *Simulator) nodeDown(node string) {
	if s.cfg.Lifecycle != nil {
		s.cfg.Lifecycle.NodeDown(node)
	}
}

// nodeUp tells the lifecycle, if any, that node is back with KWOK.
func (s *Simulator) nodeUp(node string) {
	if s.cfg.Lifecycle != nil {
		s.cfg.Lifecycle.NodeUp(node)
	}
}
