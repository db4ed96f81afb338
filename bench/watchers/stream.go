package watchers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// One steady watch: its initial list's resource version, the stream and its frames counted.

// listResourceVersions reads the current resourceVersion of every watched
// collection with the harness's identity.
func (p *Population) listResourceVersions(ctx context.Context) error {
	c, err := rest.HTTPClientFor(p.opts.Base)
	if err != nil {
		return fmt.Errorf("steady watches: harness HTTP client: %w", err)
	}
	for _, comp := range p.components {
		for _, sp := range specsOf(comp, "") {
			if p.latest[sp.collection()].Load() != nil {
				continue // listed for another component
			}
			rv, err := listResourceVersion(ctx, c, p.url, sp)
			if err != nil {
				return fmt.Errorf("steady watches: reading the resourceVersion of %s: %w", sp.resource, err)
			}
			p.latest[sp.collection()].Store(&rv)
		}
	}
	return nil
}

// listResourceVersion LISTs one object of sp's collection as JSON and
// returns the list's resourceVersion: the first one in the body, as
// metadata comes before items.
func listResourceVersion(ctx context.Context, c *http.Client, base *url.URL, sp spec) (string, error) {
	resp, err := get(ctx, c, base, sp, url.Values{"limit": {"1"}}, "application/json")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("LIST %s: %s: %.200s", sp.path, resp.Status, body)
	}
	rv, ok := jsonString(body, jsonRV)
	if !ok {
		return "", fmt.Errorf("LIST %s: no resourceVersion in the answer", sp.path)
	}
	return rv, nil
}

// get GETs sp's collection with query q, accepting accept.
func get(ctx context.Context, c *http.Client, base *url.URL, sp spec, q url.Values, accept string) (*http.Response, error) {
	u := *base
	u.Path, u.RawQuery = path.Join(u.Path, sp.path), q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	return c.Do(req)
}

// watch holds one watch until ctx ends, as a reflector does: it resumes
// from the last resourceVersion it saw when the server ends the watch,
// backs off and retries after errors, and starts over with initial events
// when its resourceVersion has expired.
func (p *Population) watch(ctx context.Context, c *http.Client, st *stats, sp spec, initial bool) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	rv := ""
	if !initial {
		if v := p.latest[sp.collection()].Load(); v != nil {
			rv = *v
		}
	}
	backoff := backoffInitial
	for ctx.Err() == nil {
		resync := rv == ""
		if resync {
			st.resyncs.Add(1)
		}
		last, err := p.stream(ctx, c, st, sp, rv, time.Duration((1+rng.Float64())*float64(minWatchTimeout)))
		if ctx.Err() != nil {
			return
		}
		var expired errExpired
		if errors.As(err, &expired) {
			rv = ""
			continue
		}
		if last != "" {
			rv = last
		}
		if err == nil {
			st.renewed.Add(1)
			backoff = backoffInitial
			continue
		}
		st.reconnects.Add(1)
		select {
		case <-ctx.Done():
			return
		case <-p.clk.After(time.Duration((1 + rng.Float64()) * float64(backoff))):
		}
		backoff = min(2*backoff, backoffMax)
	}
}

// errExpired is a watch whose resourceVersion is gone (410).
type errExpired struct{ error }

// stream opens one watch from rv (initial events when empty) and reads it
// to its end. It returns the last resourceVersion it saw, and nil when the
// server ended the watch cleanly.
func (p *Population) stream(ctx context.Context, c *http.Client, st *stats, sp spec, rv string, timeout time.Duration) (string, error) {
	q := sp.query()
	q.Set("watch", "1")
	q.Set("allowWatchBookmarks", "true")
	q.Set("timeoutSeconds", strconv.Itoa(int(timeout.Seconds())))
	if rv == "" {
		// A watch-list: the initial state as ADDED events, then a
		// bookmark, then changes (client-go WatchListClient, on in 1.36).
		q.Set("sendInitialEvents", "true")
		q.Set("resourceVersionMatch", string(metav1.ResourceVersionMatchNotOlderThan))
	} else {
		q.Set("resourceVersion", rv)
	}
	resp, err := get(ctx, c, p.url, sp, q, p.opts.Accept)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		err := fmt.Errorf("WATCH %s: %s: %.200s", sp.resource, resp.Status, body)
		if resp.StatusCode == http.StatusGone {
			return "", errExpired{err}
		}
		return "", err
	}
	fr, err := newFrameReader(resp.Header.Get("Content-Type"), resp.Body)
	if err != nil {
		return "", err
	}
	st.open.Add(1)
	defer st.open.Add(-1)
	return p.count(fr, st, sp)
}

// count reads frames until the stream ends, counting them.
func (p *Population) count(fr frameReader, st *stats, sp spec) (last string, err error) {
	for {
		f, err := fr.next()
		if f.size > 0 {
			st.bytes.Add(int64(f.size))
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return last, nil
			}
			return last, err
		}
		switch f.typ {
		case eventBookmark:
			st.bookmarks.Add(1)
		case eventError:
			if f.expired {
				return "", errExpired{fmt.Errorf("WATCH %s: resourceVersion %s expired", sp.resource, last)}
			}
			return last, fmt.Errorf("WATCH %s: ERROR event", sp.resource)
		default:
			st.events.Add(1)
		}
		if f.rv != "" {
			last = f.rv
			p.latest[sp.collection()].Store(&f.rv)
		}
	}
}
