package compare

import (
	"math"
	"testing"
)

func TestMinUTestP(t *testing.T) {
	tests := []struct {
		n1, n2 int
		want   float64
	}{
		{5, 1, 2.0 / 6},
		{1, 5, 2.0 / 6},
		{3, 3, 0.1},
		{4, 4, 2.0 / 70},
		{5, 5, 2.0 / 252},
		{1, 1, 1},
		{0, 5, 1},
	}
	for _, tt := range tests {
		if got := MinUTestP(tt.n1, tt.n2); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("MinUTestP(%d, %d) = %v, want %v", tt.n1, tt.n2, got, tt.want)
		}
	}
}
