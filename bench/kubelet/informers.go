package kubelet

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/poll"
)

// A simulated kubelet's informers and reflectors, and the watches of its pods' Secrets and ConfigMaps.

// waitFor waits for caches to sync. A real kubelet keeps retrying its
// LIST/WATCH for as long as it takes (reflectors back off on 429s and
// errors), so the only bound is the session's sync timeout, the storm's
// recovery timeout.
//
// It checks every syncCheckInterval on the session's clock, not every
// 100 ms as cache.WaitForCacheSync does: the kubelet waits for no cache
// between its pod watch and its pods' first status sync (the pod source
// pushes the watch's initial pods to the sync loop as they come,
// config/apiserver.go newSourceApiserverFromLW, an UndeltaStore), and the
// v1.36.3 kubelet on containerd sent its first pod GET 6 to 12 ms after
// its pod watch and its last request 42 to 65 ms after it (audit log, 3 restarts of
// kubelet/preserve on a quiet host, issue 46), where two 100 ms polls put
// the model's 200 ms after it. 10 ms keeps the request goldens exact (at 5 ms
// whether a watch had synced at the first check varied from run to run).
func (s *session) waitFor(ctx context.Context, what string, synced ...cache.InformerSynced) error {
	start := s.clk.Now()
	ctx, cancel := context.WithTimeout(ctx, s.syncTimeout)
	defer cancel()
	all := poll.Wait{Clock: s.clk, Interval: syncCheckInterval}
	err := all.Until(ctx, func(context.Context) (bool, string, error) {
		return !slices.ContainsFunc(synced, func(f cache.InformerSynced) bool { return !f() }), "", nil
	})
	if err != nil {
		return fmt.Errorf("kubelet %s: %s caches did not sync within %s: %w", s.node, what, s.clk.Since(start).Round(time.Second), ctx.Err())
	}
	return nil
}

// syncCheckInterval is how often waitFor checks the caches it waits for.
const syncCheckInterval = 10 * time.Millisecond

// listWatch is the list-watch of resource in namespace, filtered by
// selector, under this kubelet's WatchListClient setting.
func (s *session) listWatch(resource, namespace string, selector fields.Selector) cache.ListerWatcher {
	lw := s.lists.listWatch(resource, namespace, selector)
	if s.noWatchList {
		return listThenWatch{lw}
	}
	return lw
}

// listWatchSource builds the list-watches of a kubelet's informers and
// reflectors: the seam where a test puts a fake clientset, whose
// RESTClient() cannot serve cache.NewListWatchFromClient.
type listWatchSource interface {
	// listWatch returns the list-watch of resource (pods, nodes, services,
	// csidrivers, runtimeclasses, secrets, configmaps or
	// podcertificaterequests) in namespace, filtered by the field selector.
	listWatch(resource, namespace string, selector fields.Selector) cache.ListerWatcher
}

// restListWatches lists and watches through the REST clients of the
// kubelet's main client, as client-go's informers do
// (cache.NewListWatchFromClient): core/v1 for pods, nodes, Secrets and
// ConfigMaps, the Service client for Services (serviceClient), storage/v1
// for CSIDrivers, node/v1 for RuntimeClasses and, when the session has one,
// the PodCertificateRequest client (podCertificateClient).
type restListWatches struct {
	core, services, storage, node, certificates cache.Getter
}

// listThenWatch makes a reflector list and then watch, whatever the
// process-wide WatchListClient gate says: client-go disables watch-list
// for a ListerWatcher that reports it does not support its semantics
// (util/watchlist DoesClientNotSupportWatchListSemantics), so the gate can
// differ per simulated kubelet and per variant.
type listThenWatch struct{ cache.ListerWatcher }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

// startInformers replays the kubelet's informers (kubelet.go NewMainKubelet):
// its own Node by metadata.name; Services with spec.clusterIP!=None
// (kubelet.go: headless services are not needed for env vars); CSIDrivers
// (volume plugin manager) and RuntimeClasses (runtimeclass.NewManager);
// with the PodCertificateRequest gate, the node's PodCertificateRequests;
// then, once the node has synced, its pods by spec.nodeName in all
// namespaces (config/apiserver.go NewSourceApiserver).
func (s *session) startInformers(ctx context.Context) error {
	// Resync 0, as the kubelet's informers. The model reads no
	// managedFields; dropping them after decoding keeps the caches small and
	// changes nothing on the wire.
	s.nodeInf = cache.NewSharedIndexInformer(s.listWatch("nodes", metav1.NamespaceAll,
		fields.OneTermEqualSelector(metav1.ObjectNameField, s.node)), &corev1.Node{}, 0, cache.Indexers{})
	_ = s.nodeInf.SetTransform(fleet.StripManagedFields)
	s.run(s.nodeInf.Run)
	// Same requests as the kubelet's informers, into stores that keep
	// nothing (see sinkStore).
	var synced []cache.InformerSynced
	for _, r := range []struct {
		lw  cache.ListerWatcher
		obj runtime.Object
	}{
		{s.listWatch("services", metav1.NamespaceAll, fields.OneTermNotEqualSelector("spec.clusterIP", corev1.ClusterIPNone)), &corev1.Service{}},
		{s.listWatch("csidrivers", metav1.NamespaceAll, fields.Everything()), &storagev1.CSIDriver{}},
		{s.listWatch("runtimeclasses", metav1.NamespaceAll, fields.Everything()), &nodev1.RuntimeClass{}},
	} {
		sink := &sinkStore{}
		synced = append(synced, sink.HasSynced)
		s.run(cache.NewReflector(r.lw, r.obj, sink, 0).Run)
	}
	if s.podCertificates {
		// The podcertificate manager's informer (kubelet.go
		// NewMainKubelet, when the PodCertificateRequest gate is on: an
		// informer factory whose list options select spec.nodeName=<node>,
		// all namespaces, resync 0, started there with the others). Nothing
		// waits for it here: only the podcertificate manager's Run does
		// (podcertificate/podcertificatemanager.go), and it holds up no pod
		// that projects no pod certificate.
		s.run(cache.NewReflector(s.listWatch("podcertificaterequests", metav1.NamespaceAll,
			fields.OneTermEqualSelector("spec.nodeName", s.node)), &certificatesv1beta1.PodCertificateRequest{}, &sinkStore{}, 0).Run)
	}
	// The pod source starts once the node informer has synced, checking
	// every WaitForAPIServerSyncPeriod (1 s; config/apiserver.go
	// NewSourceApiserver): a just-started informer has not synced at the
	// first check, so the pod watch opens a second after start (measured
	// on the hollow kubelet: 1.0 s).
	nodeSynced := poll.Wait{Clock: s.clk, Interval: time.Second, What: "kubelet " + s.node + ": waiting for the node informer"}
	if err := nodeSynced.Until(ctx, func(context.Context) (bool, string, error) { return s.nodeInf.HasSynced(), "", nil }); err != nil {
		return err
	}
	// The pod source: a reflector into a store, resync 0
	// (config/apiserver.go NewSourceApiserver).
	s.podStore = newPodStore()
	s.run(cache.NewReflector(s.listWatch("pods", metav1.NamespaceAll,
		fields.OneTermEqualSelector("spec.nodeName", s.node)), &corev1.Pod{}, s.podStore, 0).Run)
	if err := s.waitFor(ctx, "pod", s.podStore.HasSynced); err != nil {
		return err
	}
	return s.waitFor(ctx, "service, CSIDriver and RuntimeClass", synced...)
}

// pods returns the node's pods from the kubelet's pod source, by name.
func (s *session) pods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, o := range s.podStore.List() {
		p := o.(*corev1.Pod)
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name })
	return out
}

// deletedPods are the pods whose deletion started while the kubelet was
// away (taint-based eviction, a scale-down), by namespace and name: the
// store lists in map order, and a fixed order keeps runs repeatable.
func (s *session) deletedPods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, o := range s.podStore.List() {
		if p := o.(*corev1.Pod); p.DeletionTimestamp != nil {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *corev1.Pod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// objectRef is a Secret or ConfigMap a pod references. volume says it is
// mounted (a volume, or a projected volume's source): the volume manager
// sets such volumes up again on every sync, and its Get is what stops the
// watch of an immutable object.
type objectRef struct {
	kind, ns, name string
	volume         bool
}

// podObjectRefs returns the Secrets and ConfigMaps a pod references, where
// the kubelet's Secret and ConfigMap managers find them when it registers
// the pod (pkg/api/v1/pod/util.go VisitPodSecretNames and
// VisitPodConfigmapNames): image pull secrets; every init, regular and
// ephemeral container's envFrom and env valueFrom; Secret and ConfigMap
// volumes, projected volumes' sources, and the Secrets of CSI and other
// volume plugins. Empty names are skipped.
func podObjectRefs(p *corev1.Pod) []objectRef {
	var refs []objectRef
	add := func(kind, name string, volume bool) {
		if name != "" {
			refs = append(refs, objectRef{kind, p.Namespace, name, volume})
		}
	}
	for _, s := range p.Spec.ImagePullSecrets {
		add("secrets", s.Name, false)
	}
	// Each container's env and envFrom, without copying the containers
	// (this runs for every pod of every restarted kubelet).
	env := func(envFrom []corev1.EnvFromSource, vars []corev1.EnvVar) {
		for _, e := range envFrom {
			if e.SecretRef != nil {
				add("secrets", e.SecretRef.Name, false)
			}
			if e.ConfigMapRef != nil {
				add("configmaps", e.ConfigMapRef.Name, false)
			}
		}
		for _, e := range vars {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				add("secrets", r.Name, false)
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				add("configmaps", r.Name, false)
			}
		}
	}
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			env(cs[i].EnvFrom, cs[i].Env)
		}
	}
	for i := range p.Spec.EphemeralContainers {
		env(p.Spec.EphemeralContainers[i].EnvFrom, p.Spec.EphemeralContainers[i].Env)
	}
	for _, v := range p.Spec.Volumes {
		switch src := v.VolumeSource; {
		case src.Secret != nil:
			add("secrets", src.Secret.SecretName, true)
		case src.ConfigMap != nil:
			add("configmaps", src.ConfigMap.Name, true)
		case src.Projected != nil:
			for _, ps := range src.Projected.Sources {
				if ps.Secret != nil {
					add("secrets", ps.Secret.Name, true)
				}
				if ps.ConfigMap != nil {
					add("configmaps", ps.ConfigMap.Name, true)
				}
			}
		case src.CSI != nil && src.CSI.NodePublishSecretRef != nil:
			add("secrets", src.CSI.NodePublishSecretRef.Name, true)
		case src.AzureFile != nil:
			add("secrets", src.AzureFile.SecretName, true)
		case src.CephFS != nil && src.CephFS.SecretRef != nil:
			add("secrets", src.CephFS.SecretRef.Name, true)
		case src.Cinder != nil && src.Cinder.SecretRef != nil:
			add("secrets", src.Cinder.SecretRef.Name, true)
		case src.FlexVolume != nil && src.FlexVolume.SecretRef != nil:
			add("secrets", src.FlexVolume.SecretRef.Name, true)
		case src.RBD != nil && src.RBD.SecretRef != nil:
			add("secrets", src.RBD.SecretRef.Name, true)
		case src.ScaleIO != nil && src.ScaleIO.SecretRef != nil:
			add("secrets", src.ScaleIO.SecretRef.Name, true)
		case src.ISCSI != nil && src.ISCSI.SecretRef != nil:
			add("secrets", src.ISCSI.SecretRef.Name, true)
		case src.StorageOS != nil && src.StorageOS.SecretRef != nil:
			add("secrets", src.StorageOS.SecretRef.Name, true)
		}
	}
	return refs
}

// objectStore is the store of one Secret's or ConfigMap's reflector: it
// keeps nothing (sinkStore) but whether the object is immutable.
type objectStore struct {
	sinkStore
	immutable atomic.Bool
}

func (s *objectStore) Transformer() cache.TransformFunc {
	return func(obj any) (any, error) {
		switch o := obj.(type) {
		case *corev1.Secret:
			s.immutable.Store(o.Immutable != nil && *o.Immutable)
		case *corev1.ConfigMap:
			s.immutable.Store(o.Immutable != nil && *o.Immutable)
		}
		return identityOnly(obj)
	}
}

// watchPodObjects replays the watch-based Secret and ConfigMap managers
// (util/manager/watch_based_manager.go): one reflector per distinct object
// the node's pods reference (podObjectRefs), listing and watching it by
// metadata.name. The watch of an immutable object ends at the first Get
// that finds it immutable (objectCache.Get: item.stop). After a restart
// that Get is the volume manager's set-up of a mounted object, right after
// the sync; an object only used for environment variables is read when a
// container starts, not after a kubelet restart, so its watch stays.
// It returns how many reflectors it started (an immutable object's too).
func (s *session) watchPodObjects(ctx context.Context, pods []*corev1.Pod) (int, error) {
	type key struct{ kind, ns, name string }
	mounted := map[key]bool{}
	var keys []key
	for _, p := range pods {
		for _, r := range podObjectRefs(p) {
			k := key{r.kind, r.ns, r.name}
			if _, seen := mounted[k]; !seen {
				keys = append(keys, k)
			}
			mounted[k] = mounted[k] || r.volume
		}
	}
	synced := make([]cache.InformerSynced, 0, len(keys))
	stores := make([]*objectStore, len(keys))
	stops := make([]chan struct{}, len(keys))
	for i, r := range keys {
		var obj runtime.Object = &corev1.ConfigMap{}
		if r.kind == "secrets" {
			obj = &corev1.Secret{}
		}
		// newReflectorLocked: the object by metadata.name, a 30-minute
		// MinWatchTimeout; synced once the store has been replaced
		// (cacheStore.Replace). Nothing reads a Secret's data here, so the
		// store keeps nothing.
		stores[i], stops[i] = &objectStore{}, make(chan struct{})
		synced = append(synced, stores[i].HasSynced)
		reflector := cache.NewReflectorWithOptions(
			s.listWatch(r.kind, r.ns, fields.OneTermEqualSelector(metav1.ObjectNameField, r.name)),
			obj, stores[i], cache.ReflectorOptions{
				Name:            fmt.Sprintf("object-%q/%q", r.ns, r.name),
				MinWatchTimeout: 30 * time.Minute,
			})
		own := stops[i]
		s.run(func(stop <-chan struct{}) {
			both := make(chan struct{})
			go func() {
				select {
				case <-stop:
				case <-own:
				}
				close(both)
			}()
			reflector.Run(both)
		})
	}
	if err := s.waitFor(ctx, "secret and configmap", synced...); err != nil {
		return 0, err
	}
	for i, k := range keys {
		if mounted[k] && stores[i].immutable.Load() {
			close(stops[i])
		}
	}
	return len(keys), nil
}
