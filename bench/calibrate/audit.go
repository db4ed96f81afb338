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
// reads (Metadata level: no bodies).
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
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
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
