package cluster

import (
	"context"
	"fmt"
)

// Stop stops every component and keeps the cluster's files and its ports
// (kwokctl stop cluster): Start brings it back.
func (e *Embedded) Stop(ctx context.Context) error {
	out, err := e.kwokctl(ctx, "stop", "cluster", "--name", e.opts.Name)
	if err != nil {
		return fmt.Errorf("stopping embedded cluster %q: %w\n%s", e.opts.Name, err, tail(out, 2000))
	}
	return nil
}
