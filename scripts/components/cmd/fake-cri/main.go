// Command fake-cri is a fake CRI runtime that keeps its state across its own
// restarts, for running a real kubelet (kubemark's hollow kubelet) without
// containerd.
//
// It serves the upstream fakes (k8s.io/cri-client/pkg/fake over
// k8s.io/cri-api/pkg/apis/testing) in a process of its own, so that
// restarting the kubelet leaves "containers" running, as on a real node.
// Every mutating RPC rewrites a JSON state file before it returns, so that
// restarting fake-cri, even with SIGKILL, keeps them too, as containerd
// with its shims does. Started with --reboot it loads that file and then
// marks every container exited and every sandbox not ready, which is how
// containerd's on-disk metadata looks after the node rebooted.
//
// Usage:
//
//	fake-cri --listen unix:///abs/path/cri.sock --state /abs/path/state.json \
//	    --pod-cidr 10.200.3.0/24 [--reboot] [-v N]
package main

import (
	"errors"
	goflag "flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"google.golang.org/grpc"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
)

const (
	// exitUsage is returned for bad flags, like flag.ExitOnError does.
	exitUsage = 2
	// gracefulStopTimeout bounds how long SIGTERM waits for in-flight RPCs.
	gracefulStopTimeout = 2 * time.Second
	// callLogTrimInterval is how often the upstream fakes' call logs are
	// dropped; see criServer.trimCallLogs.
	callLogTrimInterval = time.Minute
)

// options are the parsed command line.
type options struct {
	socketPath string
	statePath  string
	podCIDR    string
	reboot     bool
}

// parseFlags parses args (without the program name). It returns
// pflag.ErrHelp for --help.
func parseFlags(args []string, output io.Writer) (*options, error) {
	fs := pflag.NewFlagSet("fake-cri", pflag.ContinueOnError)
	fs.SetOutput(output)
	listen := fs.String("listen", "", "CRI endpoint to serve, a unix socket: unix:///abs/path/cri.sock (the unix:// prefix is optional)")
	state := fs.String("state", "", "JSON file holding sandboxes, containers, images and pod IPs across restarts")
	podCIDR := fs.String("pod-cidr", "", "IPv4 CIDR to allocate sandbox IPs from, e.g. 10.200.3.0/24 (.0, .1 and broadcast are never used)")
	reboot := fs.Bool("reboot", false, "simulate a node reboot: mark loaded containers exited (255, Unknown) and sandboxes not ready")

	// Only klog's verbosity flags, so that -v N works as in other k8s
	// components (pflag gives single-letter Go flags a shorthand).
	klogFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(klogFlags)
	fs.AddGoFlag(klogFlags.Lookup("v"))
	fs.AddGoFlag(klogFlags.Lookup("vmodule"))

	fs.Usage = func() {
		fmt.Fprintf(output, "Usage: fake-cri --listen unix:///abs/path/cri.sock --state /abs/path/state.json --pod-cidr 10.200.3.0/24 [--reboot] [-v N]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}

	o := &options{podCIDR: *podCIDR, reboot: *reboot}
	var err error
	if o.socketPath, err = socketPathFromEndpoint(*listen); err != nil {
		return nil, err
	}
	if *state == "" {
		return nil, errors.New("--state is required")
	}
	if o.statePath, err = filepath.Abs(*state); err != nil {
		return nil, fmt.Errorf("--state: %w", err)
	}
	if o.podCIDR == "" {
		return nil, errors.New("--pod-cidr is required")
	}
	if _, err := newIPAllocator(o.podCIDR); err != nil {
		return nil, err
	}
	return o, nil
}

// socketPathFromEndpoint accepts "unix:///path" or a bare path.
func socketPathFromEndpoint(endpoint string) (string, error) {
	if endpoint == "" {
		return "", errors.New("--listen is required")
	}
	path := endpoint
	if i := strings.Index(endpoint, "://"); i >= 0 {
		if scheme := endpoint[:i]; scheme != "unix" {
			return "", fmt.Errorf("--listen %q: only unix:// endpoints are supported", endpoint)
		}
		path = endpoint[i+len("://"):]
	}
	if path == "" {
		return "", fmt.Errorf("--listen %q: empty socket path", endpoint)
	}
	return filepath.Abs(path)
}

// checkSocket refuses to take over a socket path that is not a socket, or
// that another process still serves (two runtimes on one node would both
// write the state file). A socket nobody answers on is stale, left by a
// SIGKILLed predecessor, and listenUnix replaces it.
func checkSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket; refusing to remove it", path)
	}
	conn, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		_ = conn.Close()
		return fmt.Errorf("%s is being served by another process", path)
	}
	return nil
}

// listenUnix listens on path, replacing a stale socket file, with mode 0600.
//
// It does not use k8s.io/cri-client/pkg/util.CreateListener: that binds a
// temp name and renames it into place, and a SIGKILL during startup (which
// the benchmark does) leaves the temp file behind in the socket directory.
func listenUnix(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove stale socket: %w", err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	// run() removes the socket itself after the final persist.
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o600); err != nil {
		_ = l.Close()
		return nil, err
	}
	return l, nil
}

// lockState takes an exclusive flock on "<state>.lock" for the life of the
// process (the kernel drops it when the process dies, SIGKILL included), so
// that two fake-cri instances can never interleave writes to one state file.
func lockState(statePath string) (*os.File, error) {
	f, err := os.OpenFile(statePath+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("state %s is in use by another fake-cri: %w", statePath, err)
	}
	return f, nil
}

func main() {
	os.Exit(run())
}

// stopServer lets in-flight RPCs finish (each persists before it returns),
// but does not hang on a stuck client.
func stopServer(gs *grpc.Server) {
	done := make(chan struct{})
	go func() { gs.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(gracefulStopTimeout):
		klog.InfoS("Graceful stop timed out, closing connections", "timeout", gracefulStopTimeout)
		gs.Stop()
	}
}

func run() int {
	defer klog.Flush()
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, pflag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fake-cri: %v\n", err)
		return exitUsage
	}

	if err := os.MkdirAll(filepath.Dir(o.statePath), 0o700); err != nil {
		klog.ErrorS(err, "Cannot create state directory")
		return 1
	}
	lock, err := lockState(o.statePath)
	if err != nil {
		klog.ErrorS(err, "Cannot lock state")
		return 1
	}
	defer lock.Close()

	srv, info, err := newCRIServer(o.statePath, o.podCIDR, o.reboot)
	if err != nil {
		klog.ErrorS(err, "Cannot load state", "state", o.statePath)
		return 1
	}

	if err := checkSocket(o.socketPath); err != nil {
		klog.ErrorS(err, "Cannot listen")
		return 1
	}
	lis, err := listenUnix(o.socketPath)
	if err != nil {
		klog.ErrorS(err, "Cannot listen", "socket", o.socketPath)
		return 1
	}

	// containerd accepts messages up to 16 MiB, as the kubelet's client
	// sends; grpc's server default is 4 MiB.
	gs := grpc.NewServer(grpc.MaxRecvMsgSize(16 << 20))
	runtimeapi.RegisterRuntimeServiceServer(gs, srv)
	runtimeapi.RegisterImageServiceServer(gs, srv)

	sigCh := make(chan os.Signal, 1)
	signal.Notify(sigCh, syscall.SIGTERM, syscall.SIGINT)
	serveErr := make(chan error, 1)
	go func() { serveErr <- gs.Serve(lis) }()

	stopTrim := make(chan struct{})
	go wait.Until(srv.trimCallLogs, callLogTrimInterval, stopTrim)

	klog.InfoS("fake-cri serving", "socket", o.socketPath, "state", o.statePath, "podCIDR", o.podCIDR,
		"sandboxes", info.Sandboxes, "containers", info.Containers, "images", info.Images,
		"reboot", o.reboot, "rebootExitedContainers", info.RebootExitedContainers, "rebootNotReadySandboxes", info.RebootNotReadySandboxes)

	code := 0
	select {
	case sig := <-sigCh:
		klog.InfoS("Shutting down", "signal", sig.String())
	case err := <-serveErr:
		klog.ErrorS(err, "gRPC server stopped")
		code = 1
	}
	close(stopTrim)

	stopServer(gs)
	// Every mutation is already on disk; this write is belt and braces.
	if err := srv.persist(); err != nil {
		klog.ErrorS(err, "Final persist failed", "state", o.statePath)
		code = 1
	}
	if err := os.Remove(o.socketPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		klog.ErrorS(err, "Cannot remove socket", "socket", o.socketPath)
	}
	return code
}
