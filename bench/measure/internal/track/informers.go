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

func UnwrapTombstone(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}
