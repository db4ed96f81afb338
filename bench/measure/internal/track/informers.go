package track

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/tools/cache"
)

// MaxWarnings bounds the warnings kept per measurement; the scrape
// failures are all counted in APIScrapeFailures.
const MaxWarnings = 20

// WaitForSync waits for informers to list, up to timeout.
func WaitForSync(ctx context.Context, timeout time.Duration, what string, synced ...cache.InformerSynced) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("waiting for the initial list of %s: %w", what, context.Cause(ctx))
	}
	return nil
}

// Entry returns m's entry for k, a new one (zero, then init unless nil)
// added when there is none.
func Entry[K comparable, V any](m map[K]*V, k K, init func(*V)) *V {
	v, ok := m[k]
	if !ok {
		v = new(V)
		if init != nil {
			init(v)
		}
		m[k] = v
	}
	return v
}

// Handler is an informer's event handler that hands observe every added or
// updated object of type T, and every deleted one (a tombstone's last known
// state) with deleted true; objects of another type are dropped.
func Handler[T any](observe func(obj T, deleted bool)) cache.ResourceEventHandlerFuncs {
	on := func(obj any, deleted bool) {
		if o, ok := UnwrapTombstone(obj).(T); ok {
			observe(o, deleted)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { on(obj, false) },
		UpdateFunc: func(_, obj any) { on(obj, false) },
		DeleteFunc: func(obj any) { on(obj, true) },
	}
}

// UnwrapTombstone is the last known state of a deleted object whose
// deletion the informer's watch missed, or obj itself.
func UnwrapTombstone(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}
