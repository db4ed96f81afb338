package measure

import (
	"cmp"
	"maps"
	"slices"
)

// sortedKeys returns a map's keys in order, for output that does not depend
// on map iteration.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}
