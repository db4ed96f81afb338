package kubelet

import (
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The status manager's patch written directly.
//
// statusutil.PatchPodStatus (pkg/util/pod/pod.go preparePatchBytesForPodStatus)
// marshals the old and the new pod to JSON and hands both to
// strategicpatch.CreateTwoWayMergePatch, which decodes them into maps,
// diffs the maps with the Pod's patch strategies and marshals the
// difference. That is about 360 allocations for a readiness flip of a
// one-container pod (BenchmarkPodStatusPatch), and it was the largest part
// of a simulated restart's allocations (BenchmarkKubeletReplay).
//
// appendStatusPatch writes the same bytes from the two typed statuses,
// for the statuses a kubelet writes: the scalar fields, the conditions
// (a merge list keyed by type), podIPs and hostIPs (merge lists keyed by
// ip) and the three container status lists (atomic: no patch strategy,
// so a changed list is sent whole). It mirrors what the map diff does:
//   - a field present only in the old status is sent as null, a field
//     present in the new one and absent from or different in the old one
//     is sent with its new value (strategicpatch diffMaps,
//     updatePatchIfMissing);
//   - a merge list that was empty is sent whole; otherwise the changed and
//     added elements in the new list's order, then a $patch: delete for
//     each removed element in merge key order, and a $setElementOrder list
//     when anything changed or the order did (diffLists, diffListsOfMaps,
//     normalizeSliceOrder);
//   - objects with their keys sorted, as json.Marshal writes a map.
//
// Equality is equality of the JSON: times to the second, as metav1.Time
// marshals them. A status outside that set (resource claims, resources,
// container users or volume mounts, duplicate merge keys, a string that
// is not UTF-8) makes it give up, and podStatusPatch takes the generic
// path. TestStatusPatchMatchesStrategicPatch compares the two on
// generated status pairs, byte for byte.

// statusPatchBuffers are the scratch buffers of appendStatusPatch.
var statusPatchBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// fastStatusPatch returns the patch and whether it holds nothing but the
// UID; ok is false when the statuses are outside what appendStatusPatch
// writes.
func fastStatusPatch(uid types.UID, old, cur *corev1.PodStatus) (patch []byte, unchanged, ok bool) {
	if uid == "" || !plainStatus(old) || !plainStatus(cur) {
		return nil, false, false
	}
	bp := statusPatchBuffers.Get().(*[]byte)
	defer statusPatchBuffers.Put(bp)
	w := patchWriter{buf: (*bp)[:0], ok: true}
	w.buf = append(w.buf, `{"metadata":{"uid":`...)
	w.str(string(uid))
	w.buf = append(w.buf, '}')
	mark := len(w.buf)
	w.buf = append(w.buf, `,"status":{`...)
	w.first = true
	w.statusFields(old, cur)
	unchanged = w.first
	if unchanged {
		w.buf = w.buf[:mark]
	} else {
		w.buf = append(w.buf, '}')
	}
	w.buf = append(w.buf, '}')
	*bp = w.buf[:0]
	if !w.ok {
		return nil, false, false
	}
	return slices.Clone(w.buf), unchanged, true
}

// plainStatus reports whether appendStatusPatch can write a status.
func plainStatus(st *corev1.PodStatus) bool {
	if len(st.ResourceClaimStatuses) > 0 || st.ExtendedResourceClaimStatus != nil ||
		len(st.AllocatedResources) > 0 || st.Resources != nil || len(st.NodeAllocatableResourceClaimStatuses) > 0 ||
		(st.StartTime != nil && !plainTime(st.StartTime.Time)) { // a set zero time marshals as null, as written here
		return false
	}
	for i, c := range st.Conditions {
		if !plainTime(c.LastProbeTime.Time) || !plainTime(c.LastTransitionTime.Time) ||
			slices.ContainsFunc(st.Conditions[:i], func(d corev1.PodCondition) bool { return d.Type == c.Type }) {
			return false
		}
	}
	for i, ip := range st.PodIPs {
		if slices.ContainsFunc(st.PodIPs[:i], func(o corev1.PodIP) bool { return o.IP == ip.IP }) {
			return false
		}
	}
	for i, ip := range st.HostIPs {
		if slices.ContainsFunc(st.HostIPs[:i], func(o corev1.HostIP) bool { return o.IP == ip.IP }) {
			return false
		}
	}
	for _, list := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses} {
		for i := range list {
			if !plainContainerStatus(&list[i]) {
				return false
			}
		}
	}
	return true
}

func plainContainerStatus(cs *corev1.ContainerStatus) bool {
	if len(cs.AllocatedResources) > 0 || cs.Resources != nil || len(cs.VolumeMounts) > 0 || cs.User != nil ||
		len(cs.AllocatedResourcesStatus) > 0 || cs.StopSignal != nil {
		return false
	}
	for _, s := range []*corev1.ContainerState{&cs.State, &cs.LastTerminationState} {
		if s.Running != nil && !plainTime(s.Running.StartedAt.Time) {
			return false
		}
		if t := s.Terminated; t != nil && (!plainTime(t.StartedAt.Time) || !plainTime(t.FinishedAt.Time)) {
			return false
		}
	}
	return true
}

// plainTime: a time metav1.Time marshals as null (zero) or as an RFC 3339
// time with a four-digit year.
func plainTime(t time.Time) bool {
	if t.IsZero() {
		return true
	}
	y := t.UTC().Year()
	return y >= 0 && y <= 9999
}

// patchWriter appends JSON to buf. first is true until the current object
// has a member; ok turns false on a string it cannot write exactly.
type patchWriter struct {
	buf   []byte
	first bool
	ok    bool
}

// key starts a member of the current object.
func (w *patchWriter) key(k string) {
	if !w.first {
		w.buf = append(w.buf, ',')
	}
	w.first = false
	w.buf = append(w.buf, '"')
	w.buf = append(w.buf, k...)
	w.buf = append(w.buf, '"', ':')
}

// str appends s as encoding/json does after the round trip through a map:
// plain ASCII as is, anything else through json.Marshal. A string that is
// not UTF-8 would be written differently by the round trip (U+FFFD, then
// unescaped), so it stops the fast path.
func (w *patchWriter) str(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			if !utf8.ValidString(s) {
				w.ok = false
				return
			}
			b, err := json.Marshal(s)
			if err != nil {
				w.ok = false
				return
			}
			w.buf = append(w.buf, b...)
			return
		}
	}
	w.buf = append(w.buf, '"')
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '"')
}

func (w *patchWriter) time(t metav1.Time) {
	if t.IsZero() {
		w.buf = append(w.buf, "null"...)
		return
	}
	w.buf = append(w.buf, '"')
	w.buf = t.UTC().AppendFormat(w.buf, time.RFC3339)
	w.buf = append(w.buf, '"')
}

func (w *patchWriter) int(n int64) { w.buf = strconv.AppendInt(w.buf, n, 10) }

func (w *patchWriter) bool(b bool) { w.buf = strconv.AppendBool(w.buf, b) }

func (w *patchWriter) null() { w.buf = append(w.buf, "null"...) }

// elem appends a merge list element written by its merge key: prefix (as
// `{"ip":`) then the key's value, closed.
func (w *patchWriter) elem(prefix, v string) {
	w.buf = append(w.buf, prefix...)
	w.str(v)
	w.buf = append(w.buf, '}')
}

// list appends a JSON list of n elements, each written by elem(i).
func (w *patchWriter) list(n int, elem func(i int)) {
	w.buf = append(w.buf, '[')
	for i := range n {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		elem(i)
	}
	w.buf = append(w.buf, ']')
}

// sameTime: equal as metav1.Time marshals them (to the second, or both null).
func sameTime(a, b metav1.Time) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero() == b.IsZero()
	}
	return a.Unix() == b.Unix()
}

// strField writes an omitempty string member that differs.
func (w *patchWriter) strField(k, old, cur string) {
	switch {
	case old == cur:
	case cur == "":
		w.key(k)
		w.null()
	default:
		w.key(k)
		w.str(cur)
	}
}

// intField writes an omitempty integer member that differs.
func (w *patchWriter) intField(k string, old, cur int64) {
	switch {
	case old == cur:
	case cur == 0:
		w.key(k)
		w.null()
	default:
		w.key(k)
		w.int(cur)
	}
}

// emptyList writes a list member whose old or new side is empty: nothing
// when both are, null when the new one is. It reports whether it did.
func (w *patchWriter) emptyList(k string, oldLen, curLen int) bool {
	switch {
	case oldLen == 0 && curLen == 0:
		return true
	case curLen == 0:
		w.key(k)
		w.null()
		return true
	}
	return false
}

// statusFields writes the status members that differ, in key order.
func (w *patchWriter) statusFields(old, cur *corev1.PodStatus) {
	condOrder := len(old.Conditions) > 0 && len(cur.Conditions) > 0 && condsChanged(old.Conditions, cur.Conditions)
	hostOrder := len(old.HostIPs) > 0 && len(cur.HostIPs) > 0 && !slices.Equal(ipStrings(old.HostIPs), ipStrings(cur.HostIPs))
	podOrder := len(old.PodIPs) > 0 && len(cur.PodIPs) > 0 && !slices.Equal(ipStrings(old.PodIPs), ipStrings(cur.PodIPs))
	if condOrder {
		w.key("$setElementOrder/conditions")
		w.list(len(cur.Conditions), func(i int) { w.elem(`{"type":`, string(cur.Conditions[i].Type)) })
	}
	if hostOrder {
		w.key("$setElementOrder/hostIPs")
		w.ipOrder(ipStrings(cur.HostIPs))
	}
	if podOrder {
		w.key("$setElementOrder/podIPs")
		w.ipOrder(ipStrings(cur.PodIPs))
	}
	w.conditions(old.Conditions, cur.Conditions, condOrder)
	w.containerList("containerStatuses", old.ContainerStatuses, cur.ContainerStatuses)
	w.containerList("ephemeralContainerStatuses", old.EphemeralContainerStatuses, cur.EphemeralContainerStatuses)
	w.strField("hostIP", old.HostIP, cur.HostIP)
	w.ipList("hostIPs", ipStrings(old.HostIPs), ipStrings(cur.HostIPs), hostOrder)
	w.containerList("initContainerStatuses", old.InitContainerStatuses, cur.InitContainerStatuses)
	w.strField("message", old.Message, cur.Message)
	w.strField("nominatedNodeName", old.NominatedNodeName, cur.NominatedNodeName)
	w.intField("observedGeneration", old.ObservedGeneration, cur.ObservedGeneration)
	w.strField("phase", string(old.Phase), string(cur.Phase))
	w.strField("podIP", old.PodIP, cur.PodIP)
	w.ipList("podIPs", ipStrings(old.PodIPs), ipStrings(cur.PodIPs), podOrder)
	w.strField("qosClass", string(old.QOSClass), string(cur.QOSClass))
	w.strField("reason", old.Reason, cur.Reason)
	w.strField("resize", string(old.Resize), string(cur.Resize))
	switch {
	case old.StartTime == nil && cur.StartTime == nil:
	case cur.StartTime == nil:
		w.key("startTime")
		w.null()
	case old.StartTime == nil || !sameTime(*old.StartTime, *cur.StartTime):
		w.key("startTime")
		w.time(*cur.StartTime)
	}
}

// condsChanged: whether the conditions' merge list diff is not empty or
// their order changed, i.e. whether diffLists writes $setElementOrder.
func condsChanged(old, cur []corev1.PodCondition) bool {
	return !slices.EqualFunc(old, cur, func(a, b corev1.PodCondition) bool { return a.Type == b.Type && sameCondition(&a, &b) })
}

func sameCondition(a, b *corev1.PodCondition) bool {
	return a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message &&
		a.ObservedGeneration == b.ObservedGeneration &&
		sameTime(a.LastProbeTime, b.LastProbeTime) && sameTime(a.LastTransitionTime, b.LastTransitionTime)
}

// conditions writes the conditions member: the whole list when the old one
// was empty, null when the new one is, else the changed and added
// conditions in the new order and a delete for each removed one.
func (w *patchWriter) conditions(old, cur []corev1.PodCondition, changed bool) {
	if w.emptyList("conditions", len(old), len(cur)) {
		return
	}
	switch {
	case len(old) == 0:
		w.key("conditions")
		w.list(len(cur), func(i int) { w.condition(nil, &cur[i]) })
		return
	case !changed:
		return
	}
	l := listPatch{w: w, k: "conditions"}
	for i := range cur {
		j := slices.IndexFunc(old, func(c corev1.PodCondition) bool { return c.Type == cur[i].Type })
		if j >= 0 && sameCondition(&old[j], &cur[i]) {
			continue
		}
		l.next()
		if j < 0 {
			w.condition(nil, &cur[i])
		} else {
			w.condition(&old[j], &cur[i])
		}
	}
	l.end("type", condTypes(old), condTypes(cur))
}

func condTypes(l []corev1.PodCondition) []string {
	out := make([]string, len(l))
	for i, c := range l {
		out[i] = string(c.Type)
	}
	return out
}

// condition writes one element of the conditions patch: the whole
// condition when old is nil, else its changed members and its type.
func (w *patchWriter) condition(old, cur *corev1.PodCondition) {
	outer := w.open()
	whole := old == nil
	if whole {
		old = &corev1.PodCondition{}
	}
	if whole || !sameTime(old.LastProbeTime, cur.LastProbeTime) {
		w.key("lastProbeTime")
		w.time(cur.LastProbeTime)
	}
	if whole || !sameTime(old.LastTransitionTime, cur.LastTransitionTime) {
		w.key("lastTransitionTime")
		w.time(cur.LastTransitionTime)
	}
	w.strField("message", old.Message, cur.Message)
	w.intField("observedGeneration", old.ObservedGeneration, cur.ObservedGeneration)
	w.strField("reason", old.Reason, cur.Reason)
	if whole || old.Status != cur.Status {
		w.key("status")
		w.str(string(cur.Status))
	}
	w.key("type")
	w.str(string(cur.Type))
	w.close(outer)
}

// ipStrings lists a status's pod or host IPs: corev1.PodIP and HostIP are
// the same struct.
func ipStrings[T corev1.PodIP | corev1.HostIP](l []T) []string {
	if len(l) == 0 {
		return nil
	}
	out := make([]string, len(l))
	for i, ip := range l {
		out[i] = corev1.PodIP(ip).IP
	}
	return out
}

func (w *patchWriter) ipOrder(cur []string) {
	w.list(len(cur), func(i int) { w.elem(`{"ip":`, cur[i]) })
}

// ipList writes podIPs or hostIPs: the whole list when the old one was
// empty, null when the new one is, else the added ips in the new order
// and a delete for each removed one.
func (w *patchWriter) ipList(k string, old, cur []string, changed bool) {
	if w.emptyList(k, len(old), len(cur)) {
		return
	}
	switch {
	case len(old) == 0:
		w.key(k)
		w.ipOrder(cur)
		return
	case !changed:
		return
	}
	l := listPatch{w: w, k: k}
	for _, ip := range cur {
		if !slices.Contains(old, ip) {
			l.next()
			w.elem(`{"ip":`, ip)
		}
	}
	l.end("ip", old, cur)
}

// listPatch writes the patch of merge list k element by element: the
// member opens at the first element.
type listPatch struct {
	w *patchWriter
	k string
	n int
}

// next opens the list, or separates its elements.
func (l *listPatch) next() {
	if l.n == 0 {
		l.w.key(l.k)
		l.w.buf = append(l.w.buf, '[')
	} else {
		l.w.buf = append(l.w.buf, ',')
	}
	l.n++
}

// end writes a delete for each merge key (mk) of old missing from cur, in
// key order, and closes the list if it was opened.
func (l *listPatch) end(mk string, old, cur []string) {
	removed := slices.DeleteFunc(slices.Clone(old), func(v string) bool { return slices.Contains(cur, v) })
	slices.Sort(removed)
	for _, v := range removed {
		l.next()
		l.w.elem(`{"$patch":"delete","`+mk+`":`, v)
	}
	if l.n > 0 {
		l.w.buf = append(l.w.buf, ']')
	}
}
