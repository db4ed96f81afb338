package main

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// ipAllocator hands out pod IPs from the node's pod CIDR, one per sandbox.
//
// It stands in for the CNI plugin plus host-local IPAM that containerd calls
// on RunPodSandbox. The upstream fake gives every sandbox the same address
// (apitest.FakePodSandboxIPs), which makes endpoints, NetworkPolicy and
// anything else that keys on pod IPs collapse; here each sandbox gets its own.
//
// Like host-local with a gateway, the network address and the first host
// address (.1, the bridge/gateway) are never handed out, and neither is the
// broadcast address. An address stays taken until its sandbox is removed, so
// the lowest free address is "not held by any existing sandbox record".
//
// ipAllocator is not safe for concurrent use; callers serialise access.
type ipAllocator struct {
	prefix netip.Prefix
	// first and last bound the allocatable range, inclusive.
	first, last netip.Addr

	byID map[string]netip.Addr
	byIP map[netip.Addr]string
}

// newIPAllocator parses an IPv4 CIDR such as "10.200.3.0/24". Host bits in
// the address are ignored (the prefix is masked), as the kubelet's podCIDR is
// always canonical anyway.
func newIPAllocator(cidr string) (*ipAllocator, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, fmt.Errorf("invalid --pod-cidr %q: %w", cidr, err)
	}
	if !p.Addr().Is4() {
		return nil, fmt.Errorf("invalid --pod-cidr %q: only IPv4 is supported", cidr)
	}
	// A /31 or /32 has no room for network + gateway + broadcast + a pod.
	if p.Bits() > 30 {
		return nil, fmt.Errorf("invalid --pod-cidr %q: prefix must be /30 or shorter to leave room for pods", cidr)
	}
	p = p.Masked()
	network := p.Addr()
	first := network.Next().Next() // skip network and gateway (.1)
	last := broadcast(p).Prev()    // skip broadcast
	return &ipAllocator{
		prefix: p,
		first:  first,
		last:   last,
		byID:   make(map[string]netip.Addr),
		byIP:   make(map[netip.Addr]string),
	}, nil
}

// broadcast returns the all-ones host address of an IPv4 prefix.
func broadcast(p netip.Prefix) netip.Addr {
	a := p.Addr().As4()
	binary.BigEndian.PutUint32(a[:], binary.BigEndian.Uint32(a[:])|(1<<(32-p.Bits())-1))
	return netip.AddrFrom4(a)
}

// Allocate returns the address of sandboxID, assigning the lowest free one if
// it has none yet. It is idempotent per sandbox ID, so a retried
// RunPodSandbox for the same ID does not leak an address.
func (a *ipAllocator) Allocate(sandboxID string) (netip.Addr, error) {
	if ip, ok := a.byID[sandboxID]; ok {
		return ip, nil
	}
	for ip := a.first; ip.IsValid() && ip.Compare(a.last) <= 0; ip = ip.Next() {
		if _, taken := a.byIP[ip]; taken {
			continue
		}
		a.byID[sandboxID] = ip
		a.byIP[ip] = sandboxID
		return ip, nil
	}
	// Wording follows host-local IPAM, whose error containerd passes back to
	// the kubelet verbatim as the RunPodSandbox failure.
	return netip.Addr{}, fmt.Errorf("failed to allocate IP for sandbox %q: no IP addresses available in range %s", sandboxID, a.prefix)
}

// Restore records an allocation loaded from the state file. Addresses
// outside the current CIDR (the flag changed between runs) are kept for the
// sandbox so that its status does not change, but they never collide with
// new allocations because Allocate only scans the current range.
func (a *ipAllocator) Restore(sandboxID string, ip netip.Addr) error {
	if holder, ok := a.byIP[ip]; ok && holder != sandboxID {
		return fmt.Errorf("IP %s is recorded for both sandbox %q and sandbox %q", ip, holder, sandboxID)
	}
	if old, ok := a.byID[sandboxID]; ok && old != ip {
		delete(a.byIP, old)
	}
	a.byID[sandboxID] = ip
	a.byIP[ip] = sandboxID
	return nil
}

// Release frees the address of sandboxID, if any. Releasing twice is a no-op
// because RemovePodSandbox is idempotent in CRI.
func (a *ipAllocator) Release(sandboxID string) {
	ip, ok := a.byID[sandboxID]
	if !ok {
		return
	}
	delete(a.byID, sandboxID)
	delete(a.byIP, ip)
}

// Lookup returns the address held by sandboxID.
func (a *ipAllocator) Lookup(sandboxID string) (netip.Addr, bool) {
	ip, ok := a.byID[sandboxID]
	return ip, ok
}

// Snapshot returns sandbox ID -> IP for persisting.
func (a *ipAllocator) Snapshot() map[string]string {
	out := make(map[string]string, len(a.byID))
	for id, ip := range a.byID {
		out[id] = ip.String()
	}
	return out
}
