package main

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

func TestNewIPAllocatorRejectsBadCIDRs(t *testing.T) {
	for _, tc := range []struct {
		cidr    string
		wantErr string
	}{
		{"", "invalid --pod-cidr"},
		{"10.0.0.0", "invalid --pod-cidr"},
		{"10.0.0.0/33", "invalid --pod-cidr"},
		{"not-a-cidr/24", "invalid --pod-cidr"},
		{"fd00::/64", "only IPv4"},
		{"10.0.0.0/31", "/30 or shorter"},
		{"10.0.0.0/32", "/30 or shorter"},
	} {
		t.Run(tc.cidr, func(t *testing.T) {
			_, err := newIPAllocator(tc.cidr)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("newIPAllocator(%q) error = %v, want containing %q", tc.cidr, err, tc.wantErr)
			}
		})
	}
}

func TestIPAllocator(t *testing.T) {
	for _, tc := range []struct {
		name string
		cidr string
		// ops is a script: "+id" allocates, "-id" releases; want holds the
		// expected address for each "+", or "ERR" for exhaustion.
		ops  []string
		want []string
	}{
		{
			name: "skips network and gateway, hands out ascending distinct IPs",
			cidr: "10.200.3.0/24",
			ops:  []string{"+a", "+b", "+c"},
			want: []string{"10.200.3.2", "10.200.3.3", "10.200.3.4"},
		},
		{
			name: "host bits in the flag are masked",
			cidr: "10.200.3.77/24",
			ops:  []string{"+a"},
			want: []string{"10.200.3.2"},
		},
		{
			name: "allocate is idempotent per sandbox",
			cidr: "10.200.3.0/24",
			ops:  []string{"+a", "+a", "+b"},
			want: []string{"10.200.3.2", "10.200.3.2", "10.200.3.3"},
		},
		{
			name: "released address is reused, lowest first",
			cidr: "10.200.3.0/24",
			ops:  []string{"+a", "+b", "+c", "-b", "-a", "+d", "+e", "+f"},
			want: []string{"10.200.3.2", "10.200.3.3", "10.200.3.4", "10.200.3.2", "10.200.3.3", "10.200.3.5"},
		},
		{
			name: "/30 has exactly one pod address; broadcast is never used",
			cidr: "10.9.9.0/30",
			ops:  []string{"+a", "+b", "-a", "+c"},
			want: []string{"10.9.9.2", "ERR", "10.9.9.2"},
		},
		{
			name: "/29 exhausts after 5 (8 - network - gateway - broadcast)",
			cidr: "192.168.50.8/29",
			ops:  []string{"+a", "+b", "+c", "+d", "+e", "+f", "-c", "+g"},
			want: []string{"192.168.50.10", "192.168.50.11", "192.168.50.12", "192.168.50.13", "192.168.50.14", "ERR", "192.168.50.12"},
		},
		{
			name: "releasing an unknown sandbox is a no-op",
			cidr: "10.200.3.0/24",
			ops:  []string{"-zzz", "+a"},
			want: []string{"10.200.3.2"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := newIPAllocator(tc.cidr)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, op := range tc.ops {
				id := op[1:]
				switch op[0] {
				case '+':
					ip, err := a.Allocate(id)
					if err != nil {
						if !strings.Contains(err.Error(), "no IP addresses available") {
							t.Fatalf("Allocate(%q): unexpected error %v", id, err)
						}
						got = append(got, "ERR")
						continue
					}
					got = append(got, ip.String())
				case '-':
					a.Release(id)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("allocations = %v, want %v", got, tc.want)
			}
			// Invariant: the two indexes agree and no address is shared.
			seen := map[netip.Addr]string{}
			for id, ip := range a.byID {
				if other, dup := seen[ip]; dup {
					t.Fatalf("%s held by %q and %q", ip, other, id)
				}
				seen[ip] = id
				if a.byIP[ip] != id {
					t.Fatalf("byIP[%s] = %q, want %q", ip, a.byIP[ip], id)
				}
			}
			if len(a.byIP) != len(a.byID) {
				t.Fatalf("len(byIP)=%d len(byID)=%d", len(a.byIP), len(a.byID))
			}
		})
	}
}

func TestIPAllocatorRestore(t *testing.T) {
	a, err := newIPAllocator("10.200.3.0/24")
	if err != nil {
		t.Fatal(err)
	}
	mustRestore := func(id, ip string) {
		t.Helper()
		if err := a.Restore(id, netip.MustParseAddr(ip)); err != nil {
			t.Fatalf("Restore(%s, %s): %v", id, ip, err)
		}
	}
	mustRestore("old-a", "10.200.3.2")
	mustRestore("old-c", "10.200.3.4")
	// From a previous --pod-cidr: kept for its sandbox, irrelevant to new ones.
	mustRestore("foreign", "10.99.0.7")

	if err := a.Restore("dup", netip.MustParseAddr("10.200.3.2")); err == nil {
		t.Fatal("Restore of an address held by another sandbox succeeded")
	}
	// A new sandbox gets the lowest address not held by any record.
	if ip, err := a.Allocate("new"); err != nil || ip.String() != "10.200.3.3" {
		t.Fatalf("Allocate after restore = %v, %v; want 10.200.3.3", ip, err)
	}
	if ip, err := a.Allocate("new2"); err != nil || ip.String() != "10.200.3.5" {
		t.Fatalf("second Allocate after restore = %v, %v; want 10.200.3.5", ip, err)
	}
	if ip, ok := a.Lookup("foreign"); !ok || ip.String() != "10.99.0.7" {
		t.Fatalf("Lookup(foreign) = %v, %v", ip, ok)
	}
	want := map[string]string{"old-a": "10.200.3.2", "old-c": "10.200.3.4", "foreign": "10.99.0.7", "new": "10.200.3.3", "new2": "10.200.3.5"}
	if got := a.Snapshot(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Snapshot() = %v, want %v", got, want)
	}
}
