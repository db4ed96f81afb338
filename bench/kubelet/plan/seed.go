package plan

import (
	"hash/fnv"
	"math/rand/v2"
	"strings"
)

// Seed draws a node's or a pod's numbers: the run's seed mixed with the
// name without the run's ID, so that a fixed schedule fixes the kubelets'
// draws too.
type Seed struct {
	Value int64
	RunID string
}

// Rng is the random source of name (a node or "ns/pod"), one per salt.
func (sd Seed) Rng(name string, salt uint64) *rand.Rand {
	if sd.RunID != "" {
		name = strings.TrimPrefix(name, sd.RunID+"-")
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return rand.New(rand.NewPCG(uint64(sd.Value)^h.Sum64(), salt))
}
