package kubeversion

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Version
		// errHas are substrings of the error; none means no error.
		errHas []string
	}{
		{in: "1.37.2", want: V1_37},
		{in: "v1.37.2", want: V1_37},
		{in: " 1.34.4 ", want: V1_34},
		{in: "1.37", want: V1_37},
		{in: "v1.35", want: V1_35},
		{in: "1.36", want: V1_36},
		{in: "1.33", errHas: []string{"Kubernetes 1.33 is not supported", "1.34.4, 1.35.4, 1.36.3 (the default) and 1.37.2"}},
		{in: "1.38.0", errHas: []string{"Kubernetes 1.38 is not supported"}},
		{in: "1.37.1", errHas: []string{"Kubernetes 1.37.1 is not supported", "give 1.37.2 or 1.37"}},
		{in: "", errHas: []string{`"" is not a Kubernetes version`, "1.37.2, v1.37.2 or 1.37"}},
		{in: "latest", errHas: []string{`"latest" is not a Kubernetes version`}},
		{in: "1", errHas: []string{"is not a Kubernetes version"}},
		{in: "2.0.0", errHas: []string{"is not a Kubernetes version"}},
		{in: "1.37.2.1", errHas: []string{"is not a Kubernetes version"}},
		{in: "1.037", errHas: []string{"is not a Kubernetes version"}},
		{in: "V1.37.2", errHas: []string{"is not a Kubernetes version"}},
		{in: "v1.37.2-rc.0", errHas: []string{"is not a Kubernetes version"}},
		{in: strings.Repeat("9", 100), errHas: []string{"...\" is not a Kubernetes version"}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Parse(tc.in)
			if len(tc.errHas) == 0 {
				if err != nil || got != tc.want {
					t.Fatalf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
				}
				return
			}
			var ue *UnsupportedError
			if !errors.As(err, &ue) {
				t.Fatalf("Parse(%q) = %v, %v; want an *UnsupportedError", tc.in, got, err)
			}
			if ue.Input != tc.in {
				t.Errorf("Input = %q, want %q", ue.Input, tc.in)
			}
			for _, s := range tc.errHas {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Parse(%q) error %q lacks %q", tc.in, err, s)
				}
			}
		})
	}
}

func TestSupportedParseBack(t *testing.T) {
	for _, v := range Supported() {
		for _, s := range []string{v.String(), v.Short(), v.MinorRelease()} {
			if got, err := Parse(s); err != nil || got != v {
				t.Errorf("Parse(%q) = %v, %v; want %v", s, got, err, v)
			}
		}
	}
	if !Default.IsDefault() || !(Version{}).IsDefault() || V1_37.IsDefault() {
		t.Error("IsDefault: want the default and the zero Version only")
	}
}

func TestStrings(t *testing.T) {
	if got := V1_37.String(); got != "v1.37.2" {
		t.Errorf("String = %q", got)
	}
	if got := V1_37.Short(); got != "1.37.2" {
		t.Errorf("Short = %q", got)
	}
	if got := V1_37.MinorRelease(); got != "1.37" {
		t.Errorf("MinorRelease = %q", got)
	}
	if got := (Version{}).String(); got != "" {
		t.Errorf("zero String = %q", got)
	}
	if got := V1_37.MakeTarget(); got != "make components KUBE_VERSION=v1.37.2" {
		t.Errorf("MakeTarget = %q", got)
	}
	if got := Default.MakeTarget(); got != "make components" {
		t.Errorf("default MakeTarget = %q", got)
	}
}

func TestCheckServer(t *testing.T) {
	for _, tc := range []struct {
		v        Version
		reported string
		exact    bool
		errHas   string
	}{
		{v: V1_37, reported: "v1.37.2", exact: true},
		{v: V1_37, reported: "v1.36.3", exact: true, errHas: `reports Kubernetes "v1.36.3", not the v1.37.2 asked for`},
		{v: V1_37, reported: "v0.0.0-master", exact: true, errHas: "make components KUBE_VERSION=v1.37.2"},
		{v: V1_36, reported: "v1.36.1", exact: true, errHas: "`make components`"},
		{v: V1_37, reported: "v1.37.0-gke.1100", exact: false},
		{v: V1_37, reported: "v1.37.2", exact: false},
		{v: V1_37, reported: "v1.3.2", exact: false, errHas: `runs Kubernetes "v1.3.2", not 1.37`},
		{v: V1_34, reported: "v1.35.4", exact: false, errHas: "not 1.34 as asked"},
		{v: V1_34, reported: "", exact: false, errHas: "not 1.34"},
	} {
		err := tc.v.CheckServer(tc.reported, tc.exact)
		switch {
		case tc.errHas == "" && err != nil:
			t.Errorf("%v.CheckServer(%q, %t) = %v", tc.v, tc.reported, tc.exact, err)
		case tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)):
			t.Errorf("%v.CheckServer(%q, %t) = %v; want an error with %q", tc.v, tc.reported, tc.exact, err, tc.errHas)
		}
	}
}

// GateDefaults is v's default of every gate in the table.
func (v Version) GateDefaults() map[string]bool {
	out := make(map[string]bool, len(gateHistory))
	for name := range gateHistory {
		g, _ := v.Gate(name)
		out[name] = g.Default
	}
	return out
}

func TestGateDefaults(t *testing.T) {
	type row struct{ changeStatus, watchList, podCert bool }
	want := map[Version]row{
		V1_34: {changeStatus: true, watchList: false, podCert: false},
		V1_35: {changeStatus: false, watchList: true, podCert: false},
		V1_36: {changeStatus: false, watchList: true, podCert: false},
		V1_37: {changeStatus: false, watchList: true, podCert: true},
	}
	for _, v := range Supported() {
		d := v.GateDefaults()
		got := row{d[GateChangeContainerStatusOnKubeletRestart], d[GateWatchListClient], d[GatePodCertificateRequest]}
		if got != want[v] {
			t.Errorf("%v: gate defaults %+v, want %+v", v, got, want[v])
		}
		if len(d) != len(gateHistory) {
			t.Errorf("%v: %d defaults for %d gates", v, len(d), len(gateHistory))
		}
	}
	// 1.34's kubelet has no ChangeContainerStatusOnKubeletRestart: it
	// always resets readiness.
	if g, _ := V1_34.Gate(GateChangeContainerStatusOnKubeletRestart); !g.Fixed || !g.Default {
		t.Errorf("1.34 %s = %+v, want fixed at true", GateChangeContainerStatusOnKubeletRestart, g)
	}
	if g, _ := V1_35.Gate(GateChangeContainerStatusOnKubeletRestart); g.Fixed {
		t.Errorf("1.35 %s = %+v, want settable", GateChangeContainerStatusOnKubeletRestart, g)
	}
	if _, ok := V1_36.Gate("NoSuchGate"); ok {
		t.Error("an unknown gate is in the table")
	}
	if (Version{}).GateDefaults()[GateWatchListClient] != Default.GateDefaults()[GateWatchListClient] {
		t.Error("the zero Version's gates are not the default's")
	}
}

func TestKubeletGates(t *testing.T) {
	g := map[string]bool{GateChangeContainerStatusOnKubeletRestart: true, GateWatchListClient: false, "Other": true}
	got := V1_34.KubeletGates(g)
	if _, ok := got[GateChangeContainerStatusOnKubeletRestart]; ok || len(got) != 2 || got[GateWatchListClient] || !got["Other"] {
		t.Errorf("1.34 kubelet gates %v: want ChangeContainerStatusOnKubeletRestart dropped, the rest kept", got)
	}
	if got := V1_35.KubeletGates(g); len(got) != 3 {
		t.Errorf("1.35 kubelet gates %v: want all three", got)
	}
	if len(g) != 3 {
		t.Errorf("KubeletGates changed its argument: %v", g)
	}
}
