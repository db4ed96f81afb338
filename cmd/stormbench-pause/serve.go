package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
)

// Paths of the server's HTTP API besides the probes'.
const (
	// FailPath (POST) makes every probe fail until HealPath: HTTP GETs
	// answer 503 and the TCP port is closed (connection refused).
	FailPath = "/stormbench/fail"
	// HealPath (POST) makes probes succeed again.
	HealPath = "/stormbench/heal"
)

// server answers HTTP probes on one port (GET of any path: 200 "ok", or
// 503 while failing) and TCP probes on another (a TCP probe only
// connects: the port is open, or closed while failing).
type server struct {
	tcpAddr string

	mu      sync.Mutex
	failing bool
	tcp     net.Listener // nil while failing
}

// serve runs the server until its HTTP listener fails.
func serve(httpAddr, tcpAddr string) error {
	hl, err := net.Listen("tcp", httpAddr)
	if err != nil {
		return err
	}
	s := &server{tcpAddr: tcpAddr}
	if err := s.openTCP(); err != nil {
		hl.Close()
		return err
	}
	return http.Serve(hl, s)
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == FailPath:
		s.mu.Lock()
		s.failing = true
		if s.tcp != nil {
			s.tcp.Close()
			s.tcp = nil
		}
		s.mu.Unlock()
		fmt.Fprintln(w, "failing")
	case r.Method == http.MethodPost && r.URL.Path == HealPath:
		if err := s.openTCP(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		s.mu.Lock()
		s.failing = false
		s.mu.Unlock()
		fmt.Fprintln(w, "ok")
	default:
		s.mu.Lock()
		failing := s.failing
		s.mu.Unlock()
		if failing {
			http.Error(w, "failing on demand", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	}
}

// openTCP opens the TCP port unless it is open, and accepts (and closes)
// every connection until it is closed.
func (s *server) openTCP() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tcp != nil {
		return nil
	}
	l, err := net.Listen("tcp", s.tcpAddr)
	if err != nil {
		return err
	}
	s.tcp = l
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				if !errors.Is(err, net.ErrClosed) {
					fmt.Println("tcp:", err)
				}
				return
			}
			c.Close()
		}
	}()
	return nil
}
