package calibrate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// auditEvent is the part of an audit.k8s.io/v1 Event that calibration
// reads: Metadata level, and the request body of pods/status PATCHes
// (cluster.auditPolicy).
type auditEvent struct {
	Stage            string     `json:"stage"`
	Verb             string     `json:"verb"`
	User             auditUser  `json:"user"`
	ImpersonatedUser *auditUser `json:"impersonatedUser"`
	UserAgent        string     `json:"userAgent"`
	ObjectRef        *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceivedTimestamp time.Time       `json:"requestReceivedTimestamp"`
	RequestObject            json.RawMessage `json:"requestObject"`
}

type auditUser struct {
	Username string `json:"username"`
}

// Request is one API request as the audit log recorded it.
type Request struct {
	// Time is when the API server received it.
	Time time.Time
	// User is the effective user: the impersonated one when there is one.
	User string
	// UserAgent is the client's user agent.
	UserAgent string
	// Verb is the API verb (get, list, watch, create, update, patch,
	// delete, deletecollection).
	Verb string
	// Resource and Subresource name what it acted on.
	Resource, Subresource string
	// Namespace and Name of the object; Name is empty for list and watch.
	Namespace, Name string
	// Code is the HTTP status code.
	Code int
	// ResourcesOnly says the request is a PATCH of pods/status that sets
	// status.resources and nothing else of the status.
	//
	// A kubelet on cgroup v1 sends these: it reads the pod cgroup's
	// memory.limit_in_bytes, and for a pod without a memory limit that is
	// the kernel's "unlimited" (9223372036854771712 bytes), which it
	// reports as a limit of 9007199254740988Ki (kubelet_pods.go
	// convertToAPIPodLevelResourcesStatus, InPlacePodLevelResourcesVerticalScaling,
	// beta and on in 1.36). It is written once per pod, seconds after the
	// pod first runs, with whatever sync comes next (in a calibration
	// often the first one after a restart), and once more when the pod
	// terminates (back to the empty allocated resources). On cgroup v2, memory.max reads "max",
	// which the cgroup library returns as MaxUint64, −1 as an int64, and
	// the kubelet reports nothing (cm/helpers_linux.go
	// MemoryLimitsFromConfig). A v1.36 kubelet refuses to start on cgroup
	// v1 unless failCgroupV1 is false (its default is true), as the
	// containerd-backed oracle on these cgroup v1 machines must set it. So
	// these writes are the oracle's machine, not a kubelet a 1.36 cluster
	// runs, and the calibration reports them apart.
	ResourcesOnly bool
	// Reason is a created event's reason ("Starting", "CgroupV1", ...),
	// empty for other requests and in logs without event bodies.
	Reason string
}

// Key is the request's row key: "verb resource" or "verb resource/sub".
func (r Request) Key() string {
	if r.Subresource != "" {
		return r.Verb + " " + r.Resource + "/" + r.Subresource
	}
	return r.Verb + " " + r.Resource
}

// Node returns the node whose identity sent the request, or "".
func (r Request) Node() string {
	if n, ok := strings.CutPrefix(r.User, "system:node:"); ok {
		return n
	}
	return ""
}

// KWOK says the KWOK controller sent the request. KWOK stands in for a
// simulated kubelet's heartbeats once the node is handed back to it.
func (r Request) KWOK() bool { return strings.HasPrefix(r.UserAgent, "kwok-controller/") }

// Controller returns the kube-controller-manager controller that sent the
// request, from its user agent ("kube-controller-manager/v1.36.3 (linux/amd64)
// kubernetes/<commit>/<controller>"; with --use-service-account-credentials
// the suffix is the controller's service account,
// "system:serviceaccount:kube-system:<controller>"), or "".
func (r Request) Controller() string {
	if !strings.HasPrefix(r.UserAgent, "kube-controller-manager/") {
		return ""
	}
	i := strings.LastIndexByte(r.UserAgent, '/')
	c := strings.TrimPrefix(r.UserAgent[i+1:], "system:serviceaccount:kube-system:")
	if c == "" || strings.Contains(c, " ") {
		return "kube-controller-manager"
	}
	return c
}

// parseAudit reads audit events from r and returns one Request per request:
// long-running requests (watches) at their ResponseStarted stage, every
// other request at ResponseComplete, so each is counted once.
func parseAudit(r io.Reader) ([]Request, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var out []Request
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			// A line without its newline is an event still being
			// written; it belongs to the next read.
			if err == nil {
				req, ok, perr := parseAuditLine(line)
				if perr != nil {
					return out, perr
				}
				if ok {
					out = append(out, req)
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

func parseAuditLine(line []byte) (Request, bool, error) {
	var ev auditEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return Request{}, false, fmt.Errorf("parsing audit event: %w", err)
	}
	switch {
	case ev.Stage == "ResponseStarted":
	case ev.Stage == "ResponseComplete" && ev.Verb != "watch":
	default:
		return Request{}, false, nil
	}
	req := Request{Time: ev.RequestReceivedTimestamp, User: ev.User.Username, UserAgent: ev.UserAgent, Verb: ev.Verb}
	if ev.ImpersonatedUser != nil && ev.ImpersonatedUser.Username != "" {
		req.User = ev.ImpersonatedUser.Username
	}
	if ev.ObjectRef != nil {
		req.Resource, req.Subresource = ev.ObjectRef.Resource, ev.ObjectRef.Subresource
		req.Namespace, req.Name = ev.ObjectRef.Namespace, ev.ObjectRef.Name
	}
	if ev.ResponseStatus != nil {
		req.Code = ev.ResponseStatus.Code
	}
	if req.Verb == "patch" && req.Resource == "pods" && req.Subresource == "status" && len(ev.RequestObject) > 0 {
		var patch struct {
			Status map[string]json.RawMessage `json:"status"`
		}
		if err := json.Unmarshal(ev.RequestObject, &patch); err == nil {
			_, ok := patch.Status["resources"]
			req.ResourcesOnly = ok && len(patch.Status) == 1
		}
	}
	if req.Verb == "create" && req.Resource == "events" && len(ev.RequestObject) > 0 {
		var event struct {
			Reason string `json:"reason"`
		}
		if err := json.Unmarshal(ev.RequestObject, &event); err == nil {
			req.Reason = event.Reason
		}
	}
	return req, true, nil
}

// auditTail reads an audit log from an offset on.
type auditTail struct {
	path   string
	offset int64
}

// mark moves the tail to the current end of the log.
func (t *auditTail) mark() error {
	st, err := os.Stat(t.path)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	t.offset = st.Size()
	return nil
}

// since returns the requests logged after the last mark, up to the last
// complete line.
func (t *auditTail) since() ([]Request, error) {
	f, err := os.Open(t.path)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(t.offset, io.SeekStart); err != nil {
		return nil, err
	}
	return parseAudit(f)
}
