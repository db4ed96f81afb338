package kubelet

import corev1 "k8s.io/api/core/v1"

// The container status lists of the directly written status patch
// (statuspatch.go): atomic lists, sent whole when their JSON differs, each
// ContainerStatus written with its keys sorted as json.Marshal sorts a map.

// containerList writes an atomic container status list when its JSON
// differs: the whole new list, or null when it is empty.
func (w *patchWriter) containerList(k string, old, cur []corev1.ContainerStatus) {
	if w.emptyList(k, len(old), len(cur)) {
		return
	}
	mark, wasFirst := len(w.buf), w.first
	w.key(k)
	start := len(w.buf)
	w.containerStatuses(cur)
	if len(old) == 0 {
		return
	}
	end := len(w.buf)
	w.containerStatuses(old)
	same := string(w.buf[start:end]) == string(w.buf[end:])
	w.buf = w.buf[:end]
	if same {
		w.buf, w.first = w.buf[:mark], wasFirst
	}
}

func (w *patchWriter) containerStatuses(l []corev1.ContainerStatus) {
	w.list(len(l), func(i int) { w.containerStatus(&l[i]) })
}

// open starts a nested object; close ends it and gives back the state of
// the object around it.
func (w *patchWriter) open() (outer bool) {
	outer, w.first = w.first, true
	w.buf = append(w.buf, '{')
	return outer
}

func (w *patchWriter) close(outer bool) {
	w.buf = append(w.buf, '}')
	w.first = outer
}

// containerStatus writes a ContainerStatus with its keys sorted.
func (w *patchWriter) containerStatus(cs *corev1.ContainerStatus) {
	outer := w.open()
	w.strField("containerID", "", cs.ContainerID)
	w.key("image")
	w.str(cs.Image)
	w.key("imageID")
	w.str(cs.ImageID)
	w.key("lastState")
	w.containerState(&cs.LastTerminationState)
	w.key("name")
	w.str(cs.Name)
	w.key("ready")
	w.bool(cs.Ready)
	w.key("restartCount")
	w.int(int64(cs.RestartCount))
	if cs.Started != nil {
		w.key("started")
		w.bool(*cs.Started)
	}
	w.key("state")
	w.containerState(&cs.State)
	w.close(outer)
}

func (w *patchWriter) containerState(s *corev1.ContainerState) {
	outer := w.open()
	if r := s.Running; r != nil {
		w.key("running")
		w.buf = append(w.buf, `{"startedAt":`...)
		w.time(r.StartedAt)
		w.buf = append(w.buf, '}')
	}
	if t := s.Terminated; t != nil {
		w.key("terminated")
		inner := w.open()
		w.strField("containerID", "", t.ContainerID)
		w.key("exitCode")
		w.int(int64(t.ExitCode))
		w.key("finishedAt")
		w.time(t.FinishedAt)
		w.strField("message", "", t.Message)
		w.strField("reason", "", t.Reason)
		w.intField("signal", 0, int64(t.Signal))
		w.key("startedAt")
		w.time(t.StartedAt)
		w.close(inner)
	}
	if wt := s.Waiting; wt != nil {
		w.key("waiting")
		inner := w.open()
		w.strField("message", "", wt.Message)
		w.strField("reason", "", wt.Reason)
		w.close(inner)
	}
	w.close(outer)
}
