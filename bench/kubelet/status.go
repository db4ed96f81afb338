package kubelet

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/utils/ptr"
)

// syncPodStatus replays the status manager's syncPod
// (status/status_manager.go): GET the pod from the API server, merge the
// kubelet's status, and PATCH pods/<name>/status with a two-way strategic
// merge patch, skipped when nothing changed (statusutil.PatchPodStatus).
// mutate changes the status in place and reports whether the kubelet's
// view differs. It returns whether a PATCH was sent.
func (s *session) syncPodStatus(ctx context.Context, ns, name string, mutate func(st *corev1.PodStatus) bool) (bool, error) {
	var patched bool
	forbiddenSince := time.Time{}
	// One goroutine syncs every pod status of a kubelet
	// (status_manager.go Start, syncBatch): it is busy until this returns.
	defer func() { s.statusIdleAt.Store(s.clk.Now().UnixNano()) }()
	// A sync that fails is not lost: the status manager's syncBatch runs
	// every 10 s and re-syncs every pod whose cached status differs from
	// the API server's (status_manager.go: syncBatch, needsReconcile), so a
	// kubelet keeps writing a status through 429s and timeouts for as long
	// as they last. Here the retries go on until the session's sync timeout
	// (the storm's recovery timeout).
	err := s.retry(ctx, func() error {
		var err error
		patched, err = s.syncPodStatusOnce(ctx, ns, name, mutate)
		if apierrors.IsForbidden(err) {
			// The Node authorizer says "no relationship" both for a pod
			// that left the node and while its graph is rebuilt after an
			// API server restart. The status manager retries on its next
			// sync; here, for up to podGoneAfter, then the pod is gone.
			// The kubelet's own pod watch tells which: a pod no longer in
			// it (deleted, or bound elsewhere) is gone at once.
			if !s.hasPod(ns, name) {
				return nil
			}
			if forbiddenSince.IsZero() {
				forbiddenSince = s.clk.Now()
			}
			if s.clk.Since(forbiddenSince) < podGoneAfter {
				return errRetryForbidden
			}
			return nil
		}
		return err
	})
	if errors.Is(err, errRetryForbidden) {
		err = nil
	}
	if err != nil && ctx.Err() == nil && transient(err) {
		// Still failing at the sync timeout: dropped and counted.
		if s.gaveUp != nil {
			s.gaveUp(ns+"/"+name, err)
		}
		return false, nil
	}
	return patched, err
}

// hasPod reports whether the kubelet's pod source still holds the pod
// (bound to this node and not deleted). Without a pod source (a runtime
// restart's kubelet keeps its warm cache, not modelled) it says no.
func (s *session) hasPod(ns, name string) bool {
	if s.podStore == nil {
		return false
	}
	o, ok, err := s.podStore.GetByKey(ns + "/" + name)
	if err != nil || !ok {
		return false
	}
	p := o.(*corev1.Pod)
	return p.DeletionTimestamp == nil && p.Spec.NodeName == s.node
}

// podGoneAfter is how long a pod status sync keeps retrying a Forbidden
// answer before it takes the pod as gone from the node.
const podGoneAfter = 30 * time.Second

var errRetryForbidden = &retryableError{"forbidden by the Node authorizer"}

// retryableError is an error transient() accepts.
type retryableError struct{ msg string }

func (e *retryableError) Error() string { return e.msg }

func (s *session) syncPodStatusOnce(ctx context.Context, ns, name string, mutate func(st *corev1.PodStatus) bool) (bool, error) {
	pod, err := s.getPodStatus(ctx, ns, name)
	if apierrors.IsNotFound(err) {
		// The pod went away after the kubelet's cache saw it; the status
		// manager drops the update.
		return false, nil
	}
	if apierrors.IsForbidden(err) {
		return false, err
	}
	if err != nil {
		return false, fmt.Errorf("kubelet %s: getting pod %s/%s: %w", s.node, ns, name, err)
	}
	if pod.Spec.NodeName != s.node {
		return false, nil
	}
	old := pod.Status.DeepCopy()
	st := &pod.Status
	if !mutate(st) {
		return false, nil
	}
	patch, unchanged, err := podStatusPatch(pod.UID, *old, *st)
	if err != nil {
		return false, err
	}
	if unchanged {
		return false, nil
	}
	if err := s.patchPodStatus(ctx, ns, name, patch); apierrors.IsNotFound(err) {
		return false, nil
	} else if apierrors.IsForbidden(err) {
		return false, err
	} else if err != nil {
		return false, fmt.Errorf("kubelet %s: patching pod %s/%s status: %w", s.node, ns, name, err)
	}
	return true, nil
}

// podStatusPatch builds the patch as pkg/util/pod preparePatchBytesForPodStatus
// does: the UID only in the new object, so it appears in the patch as a
// precondition, then the status difference. unchanged reports a patch that
// holds nothing but the UID. The bytes are written directly
// (fastStatusPatch) for the statuses a kubelet writes, and computed by
// strategicpatch for the others.
func podStatusPatch(uid types.UID, old, cur corev1.PodStatus) (patch []byte, unchanged bool, err error) {
	if patch, unchanged, ok := fastStatusPatch(uid, &old, &cur); ok {
		return patch, unchanged, nil
	}
	return strategicStatusPatch(uid, old, cur)
}

// strategicStatusPatch is podStatusPatch as statusutil.PatchPodStatus
// computes it: both pods to JSON, then strategicpatch.CreateTwoWayMergePatch.
func strategicStatusPatch(uid types.UID, old, cur corev1.PodStatus) (patch []byte, unchanged bool, err error) {
	dropEqualFields(&old, &cur)
	oldData, err := json.Marshal(corev1.Pod{Status: old})
	if err != nil {
		return nil, false, err
	}
	newData, err := json.Marshal(corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: cur})
	if err != nil {
		return nil, false, err
	}
	patch, err = strategicpatch.CreateTwoWayMergePatch(oldData, newData, corev1.Pod{})
	if err != nil {
		return nil, false, err
	}
	return patch, bytes.Equal(patch, []byte(fmt.Sprintf(`{"metadata":{"uid":%q}}`, uid))), nil
}

// dropEqualFields clears the status fields that are equal in old and cur,
// in both: a strategic merge patch has nothing for a field equal on both
// sides (strategicpatch diffMaps: an equal scalar, map or merge list adds
// nothing, not even a $setElementOrder), so the patch is the same, and the
// two JSON documents it is computed from are smaller. Conditions and
// container statuses, which a kubelet's writes change, are compared by
// the patch itself (and empty lists are left out of the JSON anyway). old and cur are copies; their slices are not written.
func dropEqualFields(old, cur *corev1.PodStatus) {
	dropEqual(&old.ObservedGeneration, &cur.ObservedGeneration)
	dropEqual(&old.Phase, &cur.Phase)
	dropEqual(&old.Message, &cur.Message)
	dropEqual(&old.Reason, &cur.Reason)
	dropEqual(&old.NominatedNodeName, &cur.NominatedNodeName)
	dropEqual(&old.HostIP, &cur.HostIP)
	if slices.Equal(old.HostIPs, cur.HostIPs) {
		old.HostIPs, cur.HostIPs = nil, nil
	}
	dropEqual(&old.PodIP, &cur.PodIP)
	if slices.Equal(old.PodIPs, cur.PodIPs) {
		old.PodIPs, cur.PodIPs = nil, nil
	}
	if old.StartTime.Equal(cur.StartTime) {
		old.StartTime, cur.StartTime = nil, nil
	}
	dropEqual(&old.QOSClass, &cur.QOSClass)
	dropEqual(&old.Resize, &cur.Resize)
}

// dropEqual clears *a and *b when they are equal.
func dropEqual[T comparable](a, b *T) {
	if *a == *b {
		var zero T
		*a, *b = zero, zero
	}
}

// setCondition sets a pod condition, moving its transition time only when
// its status changes (status_manager.go updateLastTransitionTime).
func setCondition(st *corev1.PodStatus, typ corev1.PodConditionType, status corev1.ConditionStatus, reason string, now metav1.Time) bool {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != typ {
			continue
		}
		if c.Status == status {
			return false
		}
		c.Status, c.Reason, c.LastTransitionTime = status, reason, now
		c.Message = ""
		if reason == "ContainersNotReady" {
			c.Message = "containers with unready status"
		}
		return true
	}
	st.Conditions = append(st.Conditions, corev1.PodCondition{Type: typ, Status: status, Reason: reason, LastTransitionTime: now})
	return true
}

// setReadiness sets each container's ready flag from ready(name) and derives
// the ContainersReady and Ready conditions, as the kubelet's status generator
// does (kubelet_pods.go generateAPIPodStatus, status/generate.go).
func setReadiness(st *corev1.PodStatus, ready func(container string) bool, now metav1.Time) bool {
	changed := false
	all := true
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		r := ready(cs.Name)
		if cs.Ready != r {
			cs.Ready = r
			changed = true
		}
		all = all && r
	}
	status, reason := corev1.ConditionTrue, ""
	if !all {
		status, reason = corev1.ConditionFalse, "ContainersNotReady"
	}
	changed = setCondition(st, corev1.ContainersReady, status, reason, now) || changed
	changed = setCondition(st, corev1.PodReady, status, reason, now) || changed
	return changed
}

// restartContainers records that every container (or only those named)
// was restarted: restartCount+1, the previous run as lastState terminated,
// a new running state, not ready and not started until probes pass
// (kuberuntime: a recreated container).
func restartContainers(st *corev1.PodStatus, which func(string) bool, exitCode int32, reason string, now metav1.Time) bool {
	changed := false
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		if which != nil && !which(cs.Name) {
			continue
		}
		started := now
		if cs.State.Running != nil {
			started = cs.State.Running.StartedAt
		}
		if t := cs.State.Terminated; t != nil {
			// Already reported terminated (a reboot's first sync).
			cs.LastTerminationState = corev1.ContainerState{Terminated: t}
		} else {
			cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: exitCode, Reason: reason, StartedAt: started, FinishedAt: now, ContainerID: cs.ContainerID,
			}}
		}
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
		cs.RestartCount++
		cs.Ready, cs.Started = false, ptr.To(false)
		changed = true
	}
	return changed
}

// terminateContainers records that every running container (or only
// those named) ended (a reboot: containerd reports exit 255, reason
// Unknown): terminated state, not ready, not started, restartCount
// unchanged until it runs again.
func terminateContainers(st *corev1.PodStatus, which func(string) bool, exitCode int32, reason string, now metav1.Time) bool {
	changed := false
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		if (which != nil && !which(cs.Name)) || cs.State.Running == nil {
			continue
		}
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exitCode, Reason: reason, StartedAt: cs.State.Running.StartedAt, FinishedAt: now, ContainerID: cs.ContainerID,
		}}
		cs.Ready, cs.Started = false, ptr.To(false)
		changed = true
	}
	return changed
}

// markStarted sets started=true on the named containers.
func markStarted(st *corev1.PodStatus) {
	t := true
	for i := range st.ContainerStatuses {
		st.ContainerStatuses[i].Started = &t
	}
}

// patchNodeReady replays the kubelet's node status update
// (kubelet_node_status.go tryUpdateNodeStatus → nodeutil.PatchNodeStatus):
// a two-way strategic merge patch of nodes/<name>/status, sent on the
// heartbeat client. The setters (nodestatus/setters.go) give every
// condition a new heartbeat time; the Ready condition's status, reason and
// message are set, and its lastTransitionTime moves only when its status
// changes. The node it patches from is the kubelet's node lister's (no
// GET), as the last patch left it.
func (s *session) patchNodeReady(ctx context.Context, ready bool, reason, message string) error {
	return s.retry(ctx, func() error {
		data, status := nodeStatusPatch(metav1.NewTime(s.clk.Now()), s.lastReady(), ready, reason, message, s.newBootID, s.newRuntimeVersion)
		if _, err := s.heartbeat.CoreV1().Nodes().Patch(ctx, s.node, types.StrategicMergePatchType, data, metav1.PatchOptions{}, "status"); err != nil {
			return fmt.Errorf("kubelet %s: patching node status: %w", s.node, err)
		}
		s.patchedReady, s.newBootID, s.newRuntimeVersion = status, "", ""
		return nil
	})
}

// nodeConditionTypes are the conditions the kubelet's setters keep, in
// its order.
var nodeConditionTypes = []string{"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"}

// lastReady returns the Ready status the kubelet last knew: what it last
// patched, else its node informer's, else the node the session started
// from.
func (s *session) lastReady() corev1.ConditionStatus {
	if s.patchedReady != "" {
		return s.patchedReady
	}
	node := s.knownNode
	if s.nodeInf != nil {
		if o, ok, _ := s.nodeInf.GetStore().GetByKey(s.node); ok {
			node = o.(*corev1.Node)
		}
	}
	if node != nil {
		if i := slices.IndexFunc(node.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == corev1.NodeReady }); i >= 0 {
			return node.Status.Conditions[i].Status
		}
	}
	return corev1.ConditionUnknown
}

// nodeStatusPatch builds the patch: every condition's heartbeat, the Ready
// condition's state, its transition time when prev differs, and the boot
// ID when it changed (a reboot).
func nodeStatusPatch(now metav1.Time, prev corev1.ConditionStatus, ready bool, reason, message, bootID, runtimeVersion string) ([]byte, corev1.ConditionStatus) {
	status := corev1.ConditionTrue
	if !ready {
		status = corev1.ConditionFalse
	}
	order := make([]map[string]string, 0, len(nodeConditionTypes))
	conds := make([]map[string]any, 0, len(nodeConditionTypes))
	for _, t := range nodeConditionTypes {
		order = append(order, map[string]string{"type": t})
		c := map[string]any{"type": t, "lastHeartbeatTime": now}
		if t == "Ready" {
			c["status"], c["reason"], c["message"] = status, reason, message
			if prev != status {
				c["lastTransitionTime"] = now
			}
		}
		conds = append(conds, c)
	}
	st := map[string]any{"$setElementOrder/conditions": order, "conditions": conds}
	info := map[string]any{}
	if bootID != "" {
		info["bootID"] = bootID
	}
	if runtimeVersion != "" {
		info["containerRuntimeVersion"] = runtimeVersion
	}
	if len(info) > 0 {
		st["nodeInfo"] = info
	}
	data, _ := json.Marshal(map[string]any{"status": st})
	return data, status
}

// newPodIP returns the address of a pod's new sandbox after a reboot: the
// next one in the node's pod CIDR above every address its pods hold or
// were given in this boot, as host-local IPAM hands out addresses after
// the last one it reserved. "" when the node has no IPv4 pod CIDR or the
// range is used up. (KWOK's allocator does not know these addresses; in a
// /24 with tens of pods they stay clear of the ones it gives new pods.)
func (s *session) newPodIP(node *corev1.Node) string {
	cidr, base, ok := s.reservePodIPs(node)
	if !ok {
		return ""
	}
	ones, bits := cidr.Mask.Size()
	size := uint32(1) << uint(bits-ones)
	if s.lastIP+2 >= size { // keep the broadcast address free
		return ""
	}
	s.lastIP++
	out := make(net.IP, 4)
	binary.BigEndian.PutUint32(out, base+s.lastIP)
	return out.String()
}

// reservePodIPs returns the node's IPv4 pod CIDR and its first address, and
// on its first call records the highest address the node's pods hold as
// the last one reserved (newPodIP); ok is false without an IPv4 pod CIDR.
// A reboot calls it before its first status write, which takes the pods'
// addresses away.
func (s *session) reservePodIPs(node *corev1.Node) (cidr *net.IPNet, base uint32, ok bool) {
	_, cidr, err := net.ParseCIDR(node.Spec.PodCIDR)
	if err != nil || cidr.IP.To4() == nil {
		return nil, 0, false
	}
	base = binary.BigEndian.Uint32(cidr.IP.To4())
	if s.lastIP == 0 {
		for _, p := range s.pods() {
			if ip := net.ParseIP(p.Status.PodIP).To4(); ip != nil && cidr.Contains(ip) {
				s.lastIP = max(s.lastIP, binary.BigEndian.Uint32(ip)-base)
			}
		}
	}
	return cidr, base, true
}
