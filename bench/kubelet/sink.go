package kubelet

import (
	"sync/atomic"

	"k8s.io/client-go/tools/cache"
)

// sinkStore is a cache.Store that keeps nothing. The kubelet's Service,
// CSIDriver and RuntimeClass informers hold every object of the cluster; a
// simulated kubelet must send the same LIST and WATCH requests and decode the
// same objects, but nothing reads those caches, and a thousand copies of
// every Service in one process would make stormbench, not the API server,
// the thing being measured. It counts what passed through.
type sinkStore struct {
	synced atomic.Bool
	seen   atomic.Int64
	rv     atomic.Pointer[string]
}

var _ cache.Store = (*sinkStore)(nil)

func (s *sinkStore) Add(any) error    { s.seen.Add(1); return nil }
func (s *sinkStore) Update(any) error { s.seen.Add(1); return nil }
func (s *sinkStore) Delete(any) error { s.seen.Add(1); return nil }
func (s *sinkStore) List() []any      { return nil }
func (s *sinkStore) ListKeys() []string {
	return nil
}
func (s *sinkStore) Get(any) (any, bool, error)         { return nil, false, nil }
func (s *sinkStore) GetByKey(string) (any, bool, error) { return nil, false, nil }
func (s *sinkStore) Resync() error                      { return nil }
func (s *sinkStore) HasSynced() bool                    { return s.synced.Load() }
func (s *sinkStore) Replace(items []any, rv string) error {
	s.seen.Add(int64(len(items)))
	s.rv.Store(&rv)
	s.synced.Store(true)
	return nil
}
func (s *sinkStore) Bookmark(rv string) { s.rv.Store(&rv) }
func (s *sinkStore) LastStoreSyncResourceVersion() string {
	if p := s.rv.Load(); p != nil {
		return *p
	}
	return ""
}
