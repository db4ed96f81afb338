package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"strings"
	"testing"
)

const passing = `{"Action":"start","Package":"a"}
{"Action":"run","Package":"a","Test":"TestSlow"}
{"Action":"output","Package":"a","Test":"TestSlow","Output":"=== RUN   TestSlow\n"}
{"Action":"output","Package":"a","Test":"TestSlow","Output":"    x_test.go:1: cluster boot: 7.5s (sbt-1, the test's own)\n"}
{"Action":"output","Package":"a","Test":"TestSlow","Output":"--- PASS: TestSlow (30.00s)\n"}
{"Action":"pass","Package":"a","Test":"TestSlow","Elapsed":30}
{"Action":"run","Package":"a","Test":"TestFast"}
{"Action":"pass","Package":"a","Test":"TestFast","Elapsed":0.1}
{"Action":"output","Package":"a","Output":"cluster boot: 6.0s (sbb-1, shared)\n"}
{"Action":"run","Package":"a","Test":"BenchmarkX"}
{"Action":"output","Package":"a","Test":"BenchmarkX","Output":"=== RUN   BenchmarkX\n"}
{"Action":"output","Package":"a","Test":"BenchmarkX","Output":"BenchmarkX\n"}
{"Action":"output","Package":"a","Test":"BenchmarkX","Output":"BenchmarkX-2  \t       1\t      1954 ns/op\t         3.000 things/op\n"}
{"Action":"output","Package":"a","Output":"ok  \ta\t31.000s\n"}
{"Action":"pass","Package":"a","Elapsed":31}
`

const failing = `{"Action":"run","Package":"b","Test":"TestBroken"}
{"Action":"output","Package":"b","Test":"TestBroken","Output":"    b_test.go:9: want 1, got 2\n"}
{"Action":"fail","Package":"b","Test":"TestBroken","Elapsed":2}
{"Action":"output","Package":"b","Output":"FAIL\tb\t2.000s\n"}
{"Action":"fail","Package":"b","Elapsed":2}
`

const buildFailed = `{"ImportPath":"c","Action":"build-output","Output":"c/x.go:1:1: syntax error\n"}
{"ImportPath":"c","Action":"build-fail"}
{"Action":"fail","Package":"c","Elapsed":0,"FailedBuild":"c"}
`

func TestSummarize(t *testing.T) {
	for _, tt := range []struct {
		name     string
		in       string
		code     int
		want     []string
		dontWant []string
	}{
		{"pass", passing, 0, []string{
			"ok  \ta\t31.000s",
			"Slowest packages (1, 31s in all, 2 cluster boots):",
			"    31.0  pass   2 (14s)         a",
			"    30.0  pass   TestSlow a",
			"     0.1  pass   TestFast a",
			"BenchmarkX-2  \t       1\t      1954 ns/op",
		}, []string{"=== RUN", "--- PASS", "BenchmarkX\n"}},
		{"fail", failing, 1, []string{"b_test.go:9: want 1, got 2", "FAIL\tb", "     2.0  fail   TestBroken b"}, nil},
		{"build failed", buildFailed, 1, []string{"syntax error"}, nil},
		{"not json", "# vet says\n" + passing, 0, []string{"# vet says"}, nil},
		// One package in two lanes (a test split by -run and -skip): the
		// times add up, and the failing half decides.
		{"split package", passing + strings.ReplaceAll(failing, `"b"`, `"a"`), 1, []string{
			"Slowest packages (1, 33s in all, 2 cluster boots):",
			"    33.0  fail   2 (14s)         a",
		}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			if code := summarize(strings.NewReader(tt.in), &out, false, 10); code != tt.code {
				t.Errorf("exit code %d, want %d", code, tt.code)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range tt.dontWant {
				if strings.Contains(out.String(), w) {
					t.Errorf("output has %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// TestHelperLane is not a test: run as a lane by TestRunLanes, it prints
// STORMBENCH_LANE_LINES events of package STORMBENCH_LANE_PKG, each with a
// 10 KB output (longer than a pipe writes at once), and exits with
// STORMBENCH_LANE_EXIT.
func TestHelperLane(t *testing.T) {
	pkg := os.Getenv("STORMBENCH_LANE_PKG")
	if pkg == "" {
		t.Skip("run by TestRunLanes")
	}
	n, _ := strconv.Atoi(os.Getenv("STORMBENCH_LANE_LINES"))
	pad := strings.Repeat("x", 10_000)
	for i := range n {
		fmt.Printf(`{"Action":"output","Package":%q,"Test":"TestX","Output":"%d %s\n"}`+"\n", pkg, i, pad)
	}
	fmt.Printf(`{"Action":"pass","Package":%q,"Elapsed":1}`+"\n", pkg)
	code, _ := strconv.Atoi(os.Getenv("STORMBENCH_LANE_EXIT"))
	os.Exit(code)
}

// TestRunLanes runs two lanes side by side: every line of each arrives
// whole (none mixed with the other lane's), and a lane that exits non-zero
// fails the run, naming it.
func TestRunLanes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		exit    string
		wantErr bool
	}{
		{"both pass", "0", false},
		{"one fails", "3", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lane := func(pkg, exit string) []string {
				return []string{"env", "STORMBENCH_LANE_PKG=" + pkg, "STORMBENCH_LANE_LINES=300", "STORMBENCH_LANE_EXIT=" + exit,
					os.Args[0], "-test.run=^TestHelperLane$"}
			}
			r, wait := runLanes([][]string{lane("a", "0"), lane("b", tc.exit)}, io.Discard)
			got := map[string]int{}
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				var e event
				if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
					t.Fatalf("a mixed or cut line: %v: %.80s…", err, sc.Text())
				}
				got[e.Package+" "+e.Action]++
			}
			err := wait()
			if (err != nil) != tc.wantErr || (err != nil && !strings.Contains(err.Error(), "STORMBENCH_LANE_PKG=b")) {
				t.Errorf("wait() = %v, want an error naming lane b: %t", err, tc.wantErr)
			}
			want := map[string]int{"a output": 300, "a pass": 1, "b output": 300, "b pass": 1}
			if !maps.Equal(got, want) {
				t.Errorf("events %v, want %v", got, want)
			}
		})
	}
}
