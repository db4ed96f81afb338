package kubelet

import (
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/stormbench/stormbench/bench/fleet"
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

var (
	_ cache.Store             = (*sinkStore)(nil)
	_ cache.TransformingStore = (*sinkStore)(nil)
)

func (s *sinkStore) Add(any) error                      { s.seen.Add(1); return nil }
func (s *sinkStore) Update(any) error                   { s.seen.Add(1); return nil }
func (s *sinkStore) Delete(any) error                   { s.seen.Add(1); return nil }
func (s *sinkStore) List() []any                        { return nil }
func (s *sinkStore) ListKeys() []string                 { return nil }
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

// Transformer is used by the reflector for its own stores too: a watch-list
// (streaming LIST) holds every initial object in a temporary store until the
// initial-events-end bookmark and then hands them to Replace (client-go
// tools/cache/reflector.go watchList). Without a transform a syncing
// kubelet held a decoded copy of every Service of the cluster until its
// list ended; a fleet-1k storm with a hundred kubelets syncing at once grew
// stormbench by about 0.6 MiB per restart, most of it there. The objects
// are still decoded in full, as a kubelet does; only their identity stays.
func (s *sinkStore) Transformer() cache.TransformFunc { return identityOnly }

// identityOnly keeps an object's namespace, name and resourceVersion (the
// temporary store keys objects by namespace/name).
func identityOnly(obj any) (any, error) {
	a, err := meta.Accessor(obj)
	if err != nil {
		return obj, nil
	}
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: a.GetName(), Namespace: a.GetNamespace(), ResourceVersion: a.GetResourceVersion(),
	}}, nil
}
func (s *sinkStore) LastStoreSyncResourceVersion() string {
	if p := s.rv.Load(); p != nil {
		return *p
	}
	return ""
}

// podStore is the store behind the kubelet's pod source reflector: it
// keeps the node's pods (the model reads their specs and deletions),
// without managedFields, and is synced once the reflector has replaced
// its contents with the initial list.
type podStore struct {
	cache.Store
	synced atomic.Bool
}

var _ cache.TransformingStore = (*podStore)(nil)

func newPodStore() *podStore {
	return &podStore{Store: cache.NewStore(cache.MetaNamespaceKeyFunc)}
}

func (s *podStore) Add(obj any) error    { return s.Store.Add(stripped(obj)) }
func (s *podStore) Update(obj any) error { return s.Store.Update(stripped(obj)) }
func (s *podStore) Replace(items []any, rv string) error {
	for i, o := range items {
		items[i] = stripped(o)
	}
	if err := s.Store.Replace(items, rv); err != nil {
		return err
	}
	s.synced.Store(true)
	return nil
}
func (s *podStore) HasSynced() bool { return s.synced.Load() }

// Transformer strips the watch-list's temporary store too.
func (s *podStore) Transformer() cache.TransformFunc { return fleet.StripManagedFields }

func stripped(obj any) any {
	o, err := fleet.StripManagedFields(obj)
	if err != nil {
		return obj
	}
	return o
}
