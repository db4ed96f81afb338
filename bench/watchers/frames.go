package watchers

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/stormbench/stormbench/bench/internal/protofield"
)

// Watch event types (k8s.io/apimachinery/pkg/watch EventType), as they
// appear on the wire.
const (
	eventBookmark = "BOOKMARK"
	eventError    = "ERROR"
)

// maxFrame bounds one watch event: the API server's request body limit
// (3 MiB, apiserver's DefaultMaxRequestSizeBytes) bounds an object, and an
// event holds one object. A larger frame means the stream is not what it
// claims to be.
const maxFrame = 16 << 20

// frame is one watch event as read off the wire, not decoded: its type, the
// resourceVersion of its object (a reflector's resume point), and its size.
type frame struct {
	// typ is ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.
	typ string
	// rv is the object's metadata.resourceVersion; empty for an ERROR
	// event's Status or when the object has none.
	rv string
	// expired is an ERROR event whose Status has reason Expired or Gone
	// (410): the resourceVersion is too old to resume from, and a
	// reflector relists (apierrors.IsResourceExpired, IsGone).
	expired bool
	// size is the frame's bytes on the wire, framing included.
	size int
}

// frameReader reads the frames of one watch stream.
type frameReader interface {
	// next returns the next frame, or io.EOF at the stream's clean end.
	next() (frame, error)
}

// newFrameReader picks the frame reader for a watch response's content
// type: the length-delimited protobuf frames of
// application/vnd.kubernetes.protobuf;stream=watch
// (apimachinery runtime/serializer/protobuf LengthDelimitedFramer), or the
// newline-terminated JSON objects of application/json (each event is one
// json.Encoder.Encode).
func newFrameReader(contentType string, r io.Reader) (frameReader, error) {
	mt, _, _ := strings.Cut(contentType, ";")
	switch strings.TrimSpace(mt) {
	case "application/vnd.kubernetes.protobuf":
		return &protobufFrames{r: r}, nil
	case "application/json", "":
		return &jsonFrames{r: bufio.NewReaderSize(r, 4<<10)}, nil
	default:
		return nil, fmt.Errorf("watch stream of content type %q: want protobuf or JSON", contentType)
	}
}

// protobufFrames reads length-delimited frames: a 4-byte big-endian length,
// then a metav1.WatchEvent in protobuf (the stream serializer is the raw
// one: no "k8s\x00" envelope), whose object is an embedded runtime.Unknown
// with the envelope. Only the event's type, the object's ObjectMeta
// resourceVersion and a Status's reason are read; the rest is skipped.
//
// A population holds tens of thousands of streams, idle most of the time:
// the protobuf reader buffers nothing of its own (the HTTP body is
// buffered already), and frames are read into buffers shared through
// framePool, not held per stream.
type protobufFrames struct {
	r io.Reader
}

// framePool holds frame buffers (*[]byte) between frames.
var framePool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// maxPooled keeps the buffers of rare large frames out of the pool.
const maxPooled = 1 << 20

func getBuf() *[]byte { return framePool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) <= maxPooled {
		*b = (*b)[:0]
		framePool.Put(b)
	}
}

func (p *protobufFrames) next() (frame, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(p.r, hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return frame{}, fmt.Errorf("reading a watch frame's length: %w", err)
		}
		return frame{}, err
	}
	n := int(binary.BigEndian.Uint32(hdr[:]))
	if n > maxFrame {
		return frame{}, fmt.Errorf("watch frame of %d bytes, more than %d", n, maxFrame)
	}
	bp := getBuf()
	defer putBuf(bp)
	if cap(*bp) < n {
		*bp = make([]byte, n)
	}
	buf := (*bp)[:n]
	*bp = buf
	if _, err := io.ReadFull(p.r, buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return frame{}, fmt.Errorf("reading a watch frame of %d bytes: %w", n, err)
	}
	f, err := parseProtobufEvent(buf)
	f.size = len(hdr) + n
	return f, err
}

// Field numbers (k8s.io/apimachinery generated.proto).
const (
	watchEventType   protowire.Number = 1 // metav1.WatchEvent.type
	watchEventObject protowire.Number = 2 // metav1.WatchEvent.object
	rawExtensionRaw  protowire.Number = 1 // runtime.RawExtension.raw
	objectMeta       protowire.Number = 1 // metadata of every top-level object
	metaRV           protowire.Number = 6 // ObjectMeta.resourceVersion
	statusReason     protowire.Number = 4 // metav1.Status.reason
)

func parseProtobufEvent(msg []byte) (frame, error) {
	// Tolerate an enveloped event too, should a server wrap it.
	if u, ok := protofield.ParseUnknown(msg); ok {
		msg = u.Raw
	}
	var f frame
	var object []byte
	if !protofield.Each(msg, func(num protowire.Number, v []byte) bool {
		switch num {
		case watchEventType:
			f.typ = string(v)
		case watchEventObject:
			object = v
		}
		return true
	}) {
		return f, errors.New("malformed protobuf watch event")
	}
	if f.typ == "" {
		return f, errors.New("protobuf watch event without a type")
	}
	var raw []byte
	protofield.Each(object, func(num protowire.Number, v []byte) bool {
		if num == rawExtensionRaw {
			raw = v
		}
		return num != rawExtensionRaw
	})
	u, ok := protofield.ParseUnknown(raw)
	obj := u.Raw
	if !ok {
		return f, nil
	}
	if f.typ == eventError {
		protofield.Each(obj, func(num protowire.Number, v []byte) bool {
			if num == statusReason {
				f.expired = isExpiredReason(string(v))
			}
			return num != statusReason
		})
		return f, nil
	}
	protofield.Each(obj, func(num protowire.Number, v []byte) bool {
		if num != objectMeta {
			return true
		}
		protofield.Each(v, func(num protowire.Number, v []byte) bool {
			if num == metaRV {
				f.rv = string(v)
				return false
			}
			return true
		})
		return false
	})
	return f, nil
}

// jsonFrames reads newline-terminated JSON watch events
// ({"type":"MODIFIED","object":{...}}). JSON escapes newlines inside
// strings, so a newline outside an object ends an event. Only the type, the
// object's first resourceVersion (its metadata's: a Kubernetes object
// serializes metadata first and resourceVersion before managedFields) and a
// Status's reason are looked up, by scanning the bytes.
type jsonFrames struct {
	r *bufio.Reader
}

func (j *jsonFrames) next() (frame, error) {
	bp := getBuf()
	defer putBuf(bp)
	for {
		line, err := j.r.ReadSlice('\n')
		*bp = append(*bp, line...)
		buf := *bp
		if len(buf) > maxFrame {
			return frame{}, fmt.Errorf("watch frame of more than %d bytes", maxFrame)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return frame{}, err
		}
		if len(bytes.TrimSpace(buf)) == 0 {
			if err != nil {
				return frame{}, io.EOF
			}
			continue
		}
		// At io.EOF, a last event without its newline still counts.
		f, perr := parseJSONEvent(buf)
		f.size = len(buf)
		return f, perr
	}
}

var (
	jsonType   = []byte(`"type":"`)
	jsonObject = []byte(`"object":`)
	jsonRV     = []byte(`"resourceVersion":"`)
	jsonReason = []byte(`"reason":"`)
)

func parseJSONEvent(b []byte) (frame, error) {
	var f frame
	typ, ok := jsonString(b, jsonType)
	if !ok {
		return f, fmt.Errorf("JSON watch event without a type: %.80q", b)
	}
	f.typ = typ
	i := bytes.Index(b, jsonObject)
	if i < 0 {
		return f, nil
	}
	obj := b[i+len(jsonObject):]
	if f.typ == eventError {
		reason, _ := jsonString(obj, jsonReason)
		f.expired = isExpiredReason(reason)
		return f, nil
	}
	f.rv, _ = jsonString(obj, jsonRV)
	return f, nil
}

// jsonString returns the string after the first key (`"key":"`), up to its
// closing quote; none of the keys read here holds an escaped quote.
func jsonString(b, key []byte) (string, bool) {
	_, rest, found := bytes.Cut(b, key)
	v, _, closed := bytes.Cut(rest, []byte(`"`))
	if !found || !closed {
		return "", false
	}
	return string(v), true
}

// isExpiredReason is metav1.StatusReasonExpired or StatusReasonGone: the
// watch's resourceVersion is gone from the watch cache (410).
func isExpiredReason(r string) bool { return r == "Expired" || r == "Gone" }
