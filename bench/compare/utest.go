package compare

import "math"

// MinUTestP is the smallest two-sided p-value the Mann–Whitney U test can
// give samples of n1 and n2 runs whatever their values: 2 / C(n1+n2, n1),
// when every run of one sample lies beyond every run of the other (ties
// only raise it). When it exceeds the significance level, the test cannot
// call any difference significant, so it cannot tell a change from noise:
// 5 + 1 runs give 0.333, 3 + 3 0.1, 4 + 4 0.029, 5 + 5 0.0079.
//
// benchmath warns of too few samples only when both are small (its
// anone.go: N1 < n && N2 < n), so a 5 + 1 comparison gets no warning;
// this is the check that covers every shape.
func MinUTestP(n1, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	lg := func(n int) float64 { v, _ := math.Lgamma(float64(n) + 1); return v }
	logC := lg(n1+n2) - lg(n1) - lg(n2)
	return math.Min(1, 2*math.Exp(-logC))
}
