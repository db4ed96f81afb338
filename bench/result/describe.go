package result

import "fmt"

// String describes the fleet in words ("1000 nodes, 20000 pods, 300
// services"), as messages show it, rather than as a Go struct.
func (f Fleet) String() string {
	return fmt.Sprintf("%d nodes, %d pods, %d services", f.Nodes, f.Pods, f.Services)
}
