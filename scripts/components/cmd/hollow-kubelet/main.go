// Command hollow-kubelet runs the real kubelet code (kubemark's hollow
// kubelet, pkg/kubemark) of the Kubernetes version it is built from (v1.36.3
// by default; kubeapi*.go and cadvisor_*.go hold what differs between
// versions, chosen by the build tag k8s_1_MINOR that make components passes
// for another version) against a CRI runtime served by a separate process
// (--runtime-endpoint), so that restarting this process leaves the containers
// running, as restarting a real kubelet does. It is the oracle for kubelet
// restart behaviour.
//
// It differs from kubemark's hollow node where kubemark deviates from a real
// kubelet: the kubelet configuration keeps the kubelet defaults (sync
// frequency, GC, image GC thresholds, ...), the clients are built as
// cmd/kubelet/app/server.go builds them (user agent, QPS, content type, event
// client), the prober and the event recorder are the real ones, and the CRI
// clients are made by kubelet.PreInitRuntimeService as in a real kubelet.
// What stays hollow is the host: a stub container manager (no cgroups), a
// fake cAdvisor (capacity and boot ID from flags), a fake OS interface,
// mounter and OOM adjuster, and kubemark's volume plugins.
package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/pflag"
	noopoteltrace "go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/server/healthz"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientset "k8s.io/client-go/kubernetes"
	v1core "k8s.io/client-go/kubernetes/typed/core/v1"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/component-base/logs/json/register"          // as cmd/kubelet: JSON log format
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // as cmd/kubelet: client metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // as cmd/kubelet: version metric
	"k8s.io/component-base/tracing"
	"k8s.io/component-base/version"
	"k8s.io/component-base/version/verflag"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	kubeletapp "k8s.io/kubernetes/cmd/kubelet/app"
	"k8s.io/kubernetes/cmd/kubelet/app/options"
	_ "k8s.io/kubernetes/pkg/features" // registers kube and client-go gates on DefaultMutableFeatureGate
	"k8s.io/kubernetes/pkg/kubelet"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	"k8s.io/kubernetes/pkg/kubemark"
)

const (
	// exitGrace is how long the process lingers after SIGTERM/SIGINT, with
	// the kubelet context cancelled, before it exits. A real kubelet returns
	// from run() as soon as its context is done and exits at once; this only
	// lets the goroutines that watch the context log their shutdown.
	exitGrace = 200 * time.Millisecond

	// userAgentCommand is the command name a real kubelet's client reports:
	// the kubelet leaves rest.Config.UserAgent empty, so client-go uses
	// rest.DefaultKubernetesUserAgent(), which starts with the base name of
	// os.Args[0], "kubelet".
	userAgentCommand = "kubelet"
)

// cliOptions are the hollow-kubelet flags that are not kubelet flags.
type cliOptions struct {
	kubeconfig      string
	name            string
	rootDir         string
	runtimeEndpoint string
	bootID          string
	cpu             int
	memory          string
	maxPods         int32
	port            int32
	healthzPort     int32
	readOnlyPort    int32
	nodeStatusFreq  time.Duration
	leaseSeconds    int32
	clusterDNS      []string
	clusterDomain   string
	featureGates    map[string]bool
	nodeLabels      map[string]string
	help            bool
}

func main() {
	os.Exit(run())
}

// usageError is a bad command line: exit code 2.
type usageError struct{ error }

func run() int {
	opts, kc, err := parseFlags(os.Args[1:])
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(os.Stderr, "hollow-kubelet: %v\nRun 'hollow-kubelet --help' for usage.\n", err)
			return 2
		}
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(os.Stderr, "hollow-kubelet: %v\n", err)
		return 1
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go handleSignals(cancel)

	if err := start(ctx, opts, kc); err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			klog.ErrorS(err, "Invalid configuration")
			klog.Flush()
			return 2
		}
		klog.ErrorS(err, "Failed to run hollow kubelet")
		klog.Flush()
		return 1
	}
	// RunKubelet started the kubelet's goroutines and returned; the
	// process lives until a signal arrives (handleSignals exits).
	select {}
}

// handleSignals cancels the kubelet context on the first SIGTERM or SIGINT
// and exits the process after exitGrace; a second signal exits at once.
func handleSignals(cancel context.CancelFunc) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	sig := <-ch
	klog.InfoS("Received signal, shutting down", "signal", sig.String())
	cancel()
	select {
	case <-time.After(exitGrace):
		klog.Flush()
		os.Exit(0)
	case <-ch:
		klog.Flush()
		os.Exit(1)
	}
}

func parseFlags(args []string) (*cliOptions, *kubeletconfig.KubeletConfiguration, error) {
	kc, err := options.NewKubeletConfiguration()
	if err != nil {
		return nil, nil, fmt.Errorf("default kubelet configuration: %w", err)
	}
	o := &cliOptions{featureGates: map[string]bool{}, nodeLabels: map[string]string{}}

	fs := pflag.NewFlagSet("hollow-kubelet", pflag.ContinueOnError)
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	fs.Usage = func() {} // a bad flag prints the error only
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to a kubeconfig file whose user acts as the node (e.g. as: system:node:NODE, as-groups: [system:nodes]). Required.")
	fs.StringVar(&o.name, "name", "", "Node name (the kubelet's --hostname-override). Required.")
	fs.StringVar(&o.rootDir, "root-dir", "", "Kubelet root directory; the cert dir, pod logs dir and plugin dirs are put under it too. Required.")
	fs.StringVar(&o.runtimeEndpoint, "runtime-endpoint", "", "CRI endpoint of the runtime and image services, e.g. unix:///abs/path/cri.sock. Required.")
	fs.Var(cliflag.NewMapStringBool(&o.featureGates), "feature-gates", "A set of key=value pairs for kubelet and client-go feature gates, e.g. ChangeContainerStatusOnKubeletRestart=true,WatchListClient=true.")
	fs.StringVar(&o.bootID, "boot-id", "", "Boot ID the node reports in status.nodeInfo.bootID (default: a new random UUID for each start).")
	fs.IntVar(&o.cpu, "cpu", 32, "CPU cores reported as node capacity.")
	fs.StringVar(&o.memory, "memory", "256Gi", "Memory reported as node capacity (a resource quantity).")
	fs.Int32Var(&o.maxPods, "max-pods", kc.MaxPods, "Number of pods that can run on this node.")
	nodeLabels := cliflag.ConfigurationMap(o.nodeLabels)
	fs.Var(&nodeLabels, "node-labels", "Labels to add when registering the node, key=value pairs separated by ','.")
	fs.StringSliceVar(&o.clusterDNS, "cluster-dns", nil, "Comma-separated DNS server IPs for pods with dnsPolicy ClusterFirst (kubelet --cluster-dns; default none, as the kubelet: then every pod sync posts MissingClusterDNS warning events).")
	fs.StringVar(&o.clusterDomain, "cluster-domain", "", "Cluster domain added to the pods' DNS search path (kubelet --cluster-domain).")
	fs.Int32Var(&o.port, "port", 0, "Port of the kubelet server on 127.0.0.1 (0 = no kubelet server).")
	fs.Int32Var(&o.healthzPort, "healthz-port", 0, "Port of the healthz endpoint on 127.0.0.1 (0 = disabled).")
	fs.Int32Var(&o.readOnlyPort, "read-only-port", 0, "Read-only port of the kubelet on 127.0.0.1 (0 = disabled).")
	fs.DurationVar(&o.nodeStatusFreq, "node-status-update-frequency", kc.NodeStatusUpdateFrequency.Duration, "How often the kubelet computes node status (kubelet default).")
	fs.Int32Var(&o.leaseSeconds, "node-lease-duration-seconds", kc.NodeLeaseDurationSeconds, "Duration of the node Lease (kubelet default).")
	fs.Int32Var(&kc.KubeAPIQPS, "kube-api-qps", kc.KubeAPIQPS, "QPS of the kubelet's main API client (kubeAPIQPS; kubelet default).")
	fs.Int32Var(&kc.KubeAPIBurst, "kube-api-burst", kc.KubeAPIBurst, "Burst of the kubelet's main API client (kubeAPIBurst; kubelet default).")
	logsapi.AddFlags(&kc.Logging, fs)
	verflag.AddFlags(fs)
	fs.BoolVarP(&o.help, "help", "h", false, "Show this help.")

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, nil, err
		}
		return nil, nil, usageError{err}
	}
	if o.help {
		fmt.Fprintf(os.Stdout, "Usage:\n  hollow-kubelet --kubeconfig FILE --name NODE --root-dir DIR --runtime-endpoint unix:///abs/cri.sock [flags]\n\nFlags:\n%s", fs.FlagUsagesWrapped(2))
		return nil, nil, pflag.ErrHelp
	}
	verflag.PrintAndExitIfRequested()
	if fs.NArg() > 0 {
		return nil, nil, usageError{fmt.Errorf("unexpected arguments: %q", fs.Args())}
	}

	if err := o.check(kc); err != nil {
		return nil, nil, err
	}
	// Feature gates, as cmd/kubelet sets them before anything else. The
	// import of k8s.io/kubernetes/pkg/features registers the kube gates and,
	// through its client-go adapter (clientfeatures.ReplaceFeatureGates),
	// the client-go gates such as WatchListClient on the same gate.
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(o.featureGates); err != nil {
		return nil, nil, usageError{fmt.Errorf("--feature-gates: %w", err)}
	}
	kc.FeatureGates = o.featureGates
	return o, kc, nil
}

// check checks the parsed flags, and fills in the boot ID and the
// absolute root directory.
func (o *cliOptions) check(kc *kubeletconfig.KubeletConfiguration) error {
	var missing []string
	for _, f := range []struct{ name, value string }{
		{"--kubeconfig", o.kubeconfig}, {"--name", o.name}, {"--root-dir", o.rootDir}, {"--runtime-endpoint", o.runtimeEndpoint},
	} {
		if strings.TrimSpace(f.value) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return usageError{fmt.Errorf("missing required flag(s): %s", strings.Join(missing, ", "))}
	}
	if !strings.HasPrefix(o.runtimeEndpoint, "unix://") {
		return usageError{fmt.Errorf("--runtime-endpoint %q: want unix:///absolute/path", o.runtimeEndpoint)}
	}
	if p := strings.TrimPrefix(o.runtimeEndpoint, "unix://"); !filepath.IsAbs(p) {
		return usageError{fmt.Errorf("--runtime-endpoint %q: socket path must be absolute", o.runtimeEndpoint)}
	}
	if o.cpu <= 0 {
		return usageError{fmt.Errorf("--cpu %d: must be positive", o.cpu)}
	}
	if q, err := resource.ParseQuantity(o.memory); err != nil || q.Sign() <= 0 {
		return usageError{fmt.Errorf("--memory %q: must be a positive quantity such as 256Gi", o.memory)}
	}
	for _, p := range []struct {
		name string
		v    int32
	}{{"--port", o.port}, {"--healthz-port", o.healthzPort}, {"--read-only-port", o.readOnlyPort}} {
		if p.v < 0 || p.v > 65535 {
			return usageError{fmt.Errorf("%s %d: must be 0..65535", p.name, p.v)}
		}
	}
	if kc.KubeAPIQPS <= 0 || kc.KubeAPIBurst <= 0 {
		return usageError{fmt.Errorf("--kube-api-qps %d, --kube-api-burst %d: both must be positive", kc.KubeAPIQPS, kc.KubeAPIBurst)}
	}
	for _, ip := range o.clusterDNS {
		if net.ParseIP(ip) == nil {
			return usageError{fmt.Errorf("--cluster-dns: %q is not an IP address", ip)}
		}
	}
	if o.bootID == "" {
		o.bootID = uuid.NewString()
	}
	abs, err := filepath.Abs(o.rootDir)
	if err != nil {
		return usageError{fmt.Errorf("--root-dir %q: %w", o.rootDir, err)}
	}
	o.rootDir = abs

	return nil
}

// clients are the kubelet's API clients, as run() makes them: the main
// client, events with their own rate limiter, and the unthrottled
// heartbeat client with a timeout.
type clients struct {
	client, heartbeat  *clientset.Clientset
	events             *v1core.CoreV1Client
	onHeartbeatFailure func()
}

func newClients(kubeconfig string, kc *kubeletconfig.KubeletConfiguration) (*clients, error) {
	clientConfig, err := kubeletClientConfig(kubeconfig, kc)
	if err != nil {
		return nil, err
	}
	// As buildKubeletClientConfig: without DISABLE_HTTP2, a failed
	// heartbeat closes the idle connections of the client transport.
	onHeartbeatFailure := func() { utilnet.CloseIdleConnectionsFor(clientConfig.Transport) }
	if os.Getenv("DISABLE_HTTP2") != "" {
		klog.InfoS("DISABLE_HTTP2 is set; hollow-kubelet keeps the HTTP/2 heartbeat-failure handling (no dialer rotation)")
	}
	client, err := clientset.NewForConfig(clientConfig)
	if err != nil {
		return nil, fmt.Errorf("kubelet client: %w", err)
	}
	// A separate client for events, with its own rate limiter (run()).
	eventClientConfig := *clientConfig
	eventClientConfig.QPS = float32(kc.EventRecordQPS)
	eventClientConfig.Burst = int(kc.EventBurst)
	eventClient, err := v1core.NewForConfig(&eventClientConfig)
	if err != nil {
		return nil, fmt.Errorf("kubelet event client: %w", err)
	}
	// A separate client for heartbeats: unthrottled, with a timeout of
	// min(node status update frequency, lease duration) (run()).
	heartbeatClientConfig := *clientConfig
	heartbeatClientConfig.Timeout = min(kc.NodeStatusUpdateFrequency.Duration, time.Duration(kc.NodeLeaseDurationSeconds)*time.Second)
	heartbeatClientConfig.QPS = float32(-1)
	heartbeatClient, err := clientset.NewForConfig(&heartbeatClientConfig)
	if err != nil {
		return nil, fmt.Errorf("kubelet heartbeat client: %w", err)
	}
	return &clients{client: client, heartbeat: heartbeatClient, events: eventClient, onHeartbeatFailure: onHeartbeatFailure}, nil
}

// serverDeps sets up the kubelet server's TLS and authentication.
func serverDeps(ctx context.Context, s *options.KubeletServer, d *kubelet.Dependencies, client clientset.Interface, name string) error {
	tlsOptions, err := kubeletapp.InitializeTLS(ctx, &s.KubeletFlags, &s.KubeletConfiguration)
	if err != nil {
		return fmt.Errorf("kubelet server TLS: %w", err)
	}
	d.TLSOptions = tlsOptions
	auth, runAuthenticatorCAReload, err := kubeletapp.BuildAuth(types.NodeName(name), client, s.KubeletConfiguration)
	if err != nil {
		return fmt.Errorf("kubelet server auth: %w", err)
	}
	d.Auth = auth
	runAuthenticatorCAReload(ctx.Done())
	return nil
}

// serveHealthz serves the healthz endpoint, restarting it if it stops.
func serveHealthz(ctx context.Context, s *options.KubeletServer) {
	mux := http.NewServeMux()
	healthz.InstallHandler(mux)
	addr := net.JoinHostPort(s.HealthzBindAddress, strconv.Itoa(int(s.HealthzPort)))
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := http.ListenAndServe(addr, mux); err != nil {
			klog.ErrorS(err, "Failed to start healthz server")
		}
	}, 5*time.Second)
}

// start builds the configuration, the clients and the dependencies and
// starts the kubelet. It returns once the kubelet runs.
func start(ctx context.Context, o *cliOptions, kc *kubeletconfig.KubeletConfiguration) error {
	// Logging, as cmd/kubelet does once flags are parsed.
	logs.InitLogs()
	if err := logsapi.ValidateAndApplyAsField(&kc.Logging, utilfeature.DefaultFeatureGate, field.NewPath("logging")); err != nil {
		return usageError{fmt.Errorf("logging: %w", err)}
	}
	klog.InfoS("Kubelet version", "kubeletVersion", version.Get())
	klog.InfoS("Hollow kubelet", "node", o.name, "rootDir", o.rootDir, "runtimeEndpoint", o.runtimeEndpoint,
		"bootID", o.bootID, "cpu", o.cpu, "memory", o.memory, "featureGates", o.featureGates)

	f := options.NewKubeletFlags()
	f.KubeConfig = o.kubeconfig
	f.RootDirectory = o.rootDir
	f.CertDirectory = filepath.Join(o.rootDir, "pki")
	f.HostnameOverride = o.name
	for k, v := range o.nodeLabels {
		f.NodeLabels[k] = v
	}
	configure(kc, o)

	s := &options.KubeletServer{KubeletFlags: *f, KubeletConfiguration: *kc}
	if err := validate(s); err != nil {
		return usageError{err}
	}
	applyMetricsFeatureGates()

	c, err := newClients(o.kubeconfig, kc)
	if err != nil {
		return err
	}
	memory := resource.MustParse(o.memory)
	cadvisor := newFakeCadvisor(o.name, o.cpu, uint64(memory.Value()), o.bootID)

	hk := kubemark.NewHollowKubelet(&s.KubeletFlags, &s.KubeletConfiguration, c.client, c.heartbeat,
		cadvisor, nil, nil, cm.NewStubContainerManager())
	d := hk.KubeletDeps
	// The real prober: with ProbeManager nil, NewMainKubelet builds
	// prober.NewManager (pkg/kubelet/kubelet.go).
	d.ProbeManager = nil
	// The real event recorder: with Recorder nil and EventClient set,
	// makeEventRecorder (cmd/kubelet/app/server.go, called by RunKubelet)
	// builds a broadcaster that posts to the API server. A non-fake
	// recorder also makes NewMainKubelet start the OOM watcher, which reads
	// /dev/kmsg as in a real kubelet.
	d.Recorder = nil
	d.EventClient = c.events
	d.OnHeartbeatFailure = c.onHeartbeatFailure

	// The CRI clients, as run() makes them: RuntimeRequestTimeout (2m) as
	// the connection and call timeout, CRIListStreaming from the gates.
	if err := preInitRuntimeService(ctx, &s.KubeletConfiguration, d); err != nil {
		return fmt.Errorf("CRI runtime at %s: %w", o.runtimeEndpoint, err)
	}
	if err := cgroupDriverFromCRI(ctx, s, d); err != nil {
		return err
	}

	if s.EnableServer {
		if err := serverDeps(ctx, s, d, c.client, o.name); err != nil {
			return err
		}
	}
	if err := d.OOMAdjuster.ApplyOOMScoreAdj(0, int(s.OOMScoreAdj)); err != nil {
		klog.InfoS("Failed to ApplyOOMScoreAdj", "err", err)
	}

	if err := kubeletapp.RunKubelet(ctx, s, d); err != nil {
		return fmt.Errorf("run kubelet: %w", err)
	}

	if s.HealthzPort > 0 {
		serveHealthz(ctx, s)
	}
	return nil
}

// configure changes the kubelet defaults (options.NewKubeletConfiguration:
// the v1beta1 defaults plus the legacy command-line defaults) only where a
// hollow node needs it.
func configure(kc *kubeletconfig.KubeletConfiguration, o *cliOptions) {
	kc.ContainerRuntimeEndpoint = o.runtimeEndpoint
	kc.ImageServiceEndpoint = o.runtimeEndpoint
	// Nothing under /var/log/pods or /usr/libexec: two hollow kubelets on
	// one machine never share a directory.
	kc.PodLogsDir = filepath.Join(o.rootDir, "pod-logs")
	kc.VolumePluginDir = filepath.Join(o.rootDir, "volume-plugins")

	kc.Address = "127.0.0.1"
	kc.HealthzBindAddress = "127.0.0.1"
	kc.Port = o.port
	kc.EnableServer = o.port != 0
	kc.HealthzPort = o.healthzPort
	kc.ReadOnlyPort = o.readOnlyPort

	kc.StaticPodPath = ""
	kc.StaticPodURL = ""
	// No cgroups: the stub container manager creates none.
	kc.CgroupsPerQOS = false
	kc.CgroupRoot = ""
	kc.KubeletCgroups = ""
	kc.SystemCgroups = ""
	kc.EnforceNodeAllocatable = nil // "pods" requires CgroupsPerQOS (validation)
	kc.FailSwapOn = false
	kc.FailCgroupV1 = false
	kc.ProtectKernelDefaults = false

	kc.RegisterNode = true
	kc.ClusterDNS = o.clusterDNS
	kc.ClusterDomain = o.clusterDomain
	kc.MaxPods = o.maxPods
	kc.NodeStatusUpdateFrequency.Duration = o.nodeStatusFreq
	kc.NodeLeaseDurationSeconds = o.leaseSeconds
}

// validate checks the configuration as run() does (ValidateKubeletServer).
// Port 0 (no kubelet server) is not a valid kubelet port, so the check is
// made with the default port when the server is disabled.
func validate(s *options.KubeletServer) error {
	check := *s
	check.KubeletConfiguration = *s.KubeletConfiguration.DeepCopy()
	if !check.EnableServer && check.Port == 0 {
		check.Port = 10250
	}
	if err := options.ValidateKubeletServer(&check); err != nil {
		return fmt.Errorf("kubelet configuration: %w", err)
	}
	return nil
}

// kubeletClientConfig loads the kubeconfig and applies the overrides of
// buildKubeletClientConfig / kubeClientConfigOverrides in
// cmd/kubelet/app/server.go (no certificate rotation, no bootstrap).
func kubeletClientConfig(path string, kc *kubeletconfig.KubeletConfiguration) (*restclient.Config, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path},
		&clientcmd.ConfigOverrides{},
	).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("invalid kubeconfig: %w", err)
	}
	// setContentTypeForClient
	if kc.ContentType != "" {
		cfg.ContentType = kc.ContentType
		if kc.ContentType == "application/vnd.kubernetes.protobuf" {
			cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
		}
	}
	cfg.QPS = float32(kc.KubeAPIQPS)
	cfg.Burst = int(kc.KubeAPIBurst)
	cfg.UserAgent = kubeletUserAgent()
	// The kubelet's tracer provider is a no-op without a tracing config.
	cfg.Wrap(tracing.WrapperFor(noopoteltrace.NewTracerProvider()))
	return cfg, nil
}

// kubeletUserAgent is rest.DefaultKubernetesUserAgent() as computed in a
// binary named "kubelet".
func kubeletUserAgent() string {
	v := version.Get()
	gitVersion, _, _ := strings.Cut(cmp.Or(v.GitVersion, "unknown"), "-")
	commit := cmp.Or(v.GitCommit, "unknown")
	if len(commit) > 7 {
		commit = commit[:7]
	}
	return fmt.Sprintf("%s/%s (%s/%s) kubernetes/%s", userAgentCommand, gitVersion, goruntime.GOOS, goruntime.GOARCH, commit)
}

// cgroupDriverFromCRI is getCgroupDriverFromCRI (cmd/kubelet/app/server.go):
// the runtime's RuntimeConfig, if implemented, sets the cgroup driver.
func cgroupDriverFromCRI(ctx context.Context, s *options.KubeletServer, d *kubelet.Dependencies) error {
	var (
		rc  *runtimeapi.RuntimeConfigResponse
		err error
	)
	for range 3 {
		rc, err = d.RemoteRuntimeService.RuntimeConfig(ctx)
		if err == nil {
			break
		}
		if st, ok := status.FromError(err); ok && st.Code() == codes.Unimplemented {
			klog.InfoS("CRI implementation should be updated to support RuntimeConfig. Falling back to using cgroupDriver from kubelet config.")
			return nil
		}
		time.Sleep(2 * time.Second)
	}
	if err != nil {
		return fmt.Errorf("CRI RuntimeConfig: %w", err)
	}
	linux := rc.GetLinux()
	if linux == nil {
		return nil
	}
	switch dr := linux.GetCgroupDriver(); dr {
	case runtimeapi.CgroupDriver_SYSTEMD:
		s.CgroupDriver = "systemd"
	case runtimeapi.CgroupDriver_CGROUPFS:
		s.CgroupDriver = "cgroupfs"
	default:
		return fmt.Errorf("runtime returned an unknown cgroup driver %d", dr)
	}
	klog.InfoS("Using cgroup driver setting received from the CRI runtime", "cgroupDriver", s.CgroupDriver)
	return nil
}

// stableID is a hex digest of the node name, for IDs that must not change
// across restarts of the same node (machine ID, system UUID).
func stableID(name string) string {
	sum := sha256.Sum256([]byte("hollow-kubelet/" + name))
	return hex.EncodeToString(sum[:16])
}
