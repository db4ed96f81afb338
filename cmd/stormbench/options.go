package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/profiles"
)

// clusterOptions are the flags that pick the cluster.
type clusterOptions struct {
	kubeconfig string
	context    string
	workDir    string
	binDir     string
	name       string
	yes        bool
	// kubeVersion is --kube-version as given (run, sweep, cluster up,
	// calibrate); version is what it, a profile's kubernetes.version or
	// the default resolved to (resolveKubeVersion), zero before.
	kubeVersion string
	version     kubeversion.Version
}

// addKubeVersionFlag declares --kube-version; withProfile says the command
// takes a profile, whose kubernetes.version it overrides.
func (o *clusterOptions) addKubeVersionFlag(fs *pflag.FlagSet, withProfile bool) {
	names := mapped(kubeversion.Supported(), kubeversion.Version.Short)
	usage := "Kubernetes version of the embedded control plane and of the real and simulated kubelets: " +
		strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1] + ", or its minor release (1.37); default " + kubeversion.Default.Short()
	if withProfile {
		usage += " or the profile's kubernetes.version"
	}
	usage += ". Another version needs its components first: make components KUBE_VERSION=v1.37.2"
	fs.StringVar(&o.kubeVersion, "kube-version", "", usage)
}

// resolveKubeVersion resolves the Kubernetes version: --kube-version, set
// into the profile p when there is one (and p's feature gates checked
// against that version's kubelet), else p's kubernetes.version, else the
// default. source names p in a validation error. A version that is not
// supported is bad usage, a gate the version's kubelet lacks a profile
// validation error: both exit 2.
func (o *clusterOptions) resolveKubeVersion(p *profiles.Profile, source string) error {
	if o.kubeVersion == "" {
		o.version = kubeversion.Default
		if p != nil {
			o.version = p.KubeVersion()
		}
		return nil
	}
	v, err := kubeversion.Parse(o.kubeVersion)
	if err != nil {
		return usagef("--kube-version: %v", err)
	}
	o.version = v
	if p != nil {
		if errs := p.SetKubeVersion(v); len(errs) > 0 {
			return &profiles.ValidationError{Source: source + " with --kube-version " + v.Short(), Errs: errs}
		}
	}
	return nil
}

// versionFor is the Kubernetes version of an embedded cluster for profile
// p (nil for none): the resolved one, else p's, else the default.
func (o *clusterOptions) versionFor(p *profiles.Profile) kubeversion.Version {
	switch {
	case !o.version.IsZero():
		return o.version
	case p != nil:
		return p.KubeVersion()
	}
	return kubeversion.Default
}

// checkServerVersion checks the Kubernetes version an API server reports
// against v: exactly on an embedded cluster, whose binaries are v's; on a
// cluster of its own its minor release, when asked (a profile's
// kubernetes.version or --kube-version). A mismatch is bad input (exit 2):
// the binaries in the version's directory, or the cluster, are not what
// the run says it is of.
func checkServerVersion(v kubeversion.Version, reported string, embedded, asked bool) error {
	if !embedded && !asked {
		return nil
	}
	if err := v.CheckServer(reported, embedded); err != nil {
		return usageError{err}
	}
	return nil
}

func (o *clusterOptions) addFlags(fs *pflag.FlagSet, withTarget bool) {
	if withTarget {
		fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Kubeconfig of an existing cluster; without it stormbench uses its embedded cluster")
		fs.StringVar(&o.context, "context", "", "Kubeconfig context; required for any cluster other than the embedded one")
		fs.BoolVar(&o.yes, "yes", false, "Do not ask for confirmation before loading a non-embedded cluster")
	}
	fs.StringVar(&o.name, "name", "stormbench", "Name of the embedded cluster")
	fs.StringVar(&o.workDir, "workdir", defaultWorkDir(), "Directory for embedded clusters (kubeconfigs, logs, pki)")
	fs.StringVar(&o.binDir, "bin-dir", "", "Directory with the component binaries (default: $STORMBENCH_BIN_DIR, ./bin or a parent's bin/)")
}

func defaultWorkDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "stormbench")
	}
	return filepath.Join(os.TempDir(), "stormbench")
}

// embedded returns a handle on the named embedded cluster, with profile p's
// timing and control plane (nil: the defaults'). readOnly is for what only
// reads its state (its files, processes and endpoints: status, preflight,
// connecting to it), which works without the control-plane binaries.
func (o *clusterOptions) embedded(p *profiles.Profile, readOnly bool) (*cluster.Embedded, error) {
	comps, err := cluster.FindComponentsFor(o.binDir, o.versionFor(p))
	if err != nil && !(readOnly && errors.Is(err, cluster.ErrComponentsMissing)) {
		return nil, err
	}
	if p == nil {
		p = &profiles.Profile{}
		profiles.SetDefaults(p)
	}
	return cluster.NewEmbedded(cluster.EmbeddedOptions{Name: o.name, WorkDir: o.workDir, Components: comps, Timing: p.Timing, ControlPlane: p.ControlPlane})
}

// isEmbeddedKubeconfig reports whether path is an embedded cluster's
// kubeconfig in the work directory.
func (o *clusterOptions) isEmbeddedKubeconfig(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	wd, err := filepath.Abs(o.workDir)
	if err != nil {
		return false
	}
	return strings.HasPrefix(abs, wd+string(os.PathSeparator)) && strings.HasSuffix(abs, ".kubeconfig")
}

// embeddedName is the embedded cluster a kubeconfig in the work directory
// belongs to: "NAME" of NAME.kubeconfig or NAME.<identity>.kubeconfig.
func embeddedName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), ".kubeconfig")
	for _, id := range []string{".harness", ".kube-controller-manager", ".kube-scheduler", ".kwok-controller"} {
		base = strings.TrimSuffix(base, id)
	}
	return base
}

// connect connects to --kubeconfig, or to the running embedded cluster when
// none is given. A cluster other than the embedded one needs --context, and
// on a TTY a confirmation unless --yes.
func (o *clusterOptions) connect(ctx context.Context, env *cmdEnv, qps float32, burst int) (*cluster.Target, bool, error) {
	path := o.kubeconfig
	embedded := false
	if path == "" {
		e, err := o.embedded(nil, true)
		if err != nil {
			return nil, false, err
		}
		if !e.Exists() {
			return nil, false, usagef("no --kubeconfig given and the embedded cluster %q is not running (start it with `stormbench cluster up`)", o.name)
		}
		path = e.ClientKubeconfig()
		embedded = true
	} else if o.isEmbeddedKubeconfig(path) {
		embedded = true
		// The kubeconfig names its cluster: NAME.kubeconfig, or an
		// identity's NAME.harness.kubeconfig; --name would otherwise keep
		// its default and describe another cluster.
		if name := embeddedName(path); name != "" {
			o.name = name
		}
	} else if o.context == "" {
		return nil, false, usagef("--context is required for a cluster other than the embedded one (kubeconfig %s)", path)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, false, usagef("kubeconfig %s: %v", path, err)
	}
	t, err := cluster.Connect(ctx, cluster.ConnectOptions{Kubeconfig: path, Context: o.context, QPS: qps, Burst: burst, Timeout: 10 * time.Second})
	if err != nil {
		return nil, false, err
	}
	if !embedded {
		fmt.Fprintf(env.stderr, "Target: API server %s, context %q (Kubernetes %s)\n", t.Host, t.Context, t.ServerVersion)
		if !o.yes && isTTY(os.Stdin) {
			fmt.Fprint(env.stderr, "Load this cluster? [y/N] ")
			var answer string
			_, _ = fmt.Fscanln(os.Stdin, &answer)
			if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
				return nil, false, usagef("not confirmed")
			}
		}
	}
	return t, embedded, nil
}

// apiError says what a command was doing when its API calls failed, in
// the user's words: "interrupted" after Ctrl-C (ctx cancelled), never a
// finding such as a missing permission, and "did not answer within
// --timeout" when the command's deadline passed. Either way the command
// failed (exit 3).
func apiError(ctx context.Context, doing string, timeout time.Duration, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(ctx.Err(), context.Canceled):
		return fmt.Errorf("interrupted while %s (%w)", doing, context.Canceled)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		var ue *url.Error
		if errors.As(err, &ue) || !errors.Is(err, context.DeadlineExceeded) {
			// A request cut short: the server took it and did not answer.
			return fmt.Errorf("%s: the API server did not answer within --timeout %s (%w)", doing, timeout, context.DeadlineExceeded)
		}
		// A wait that ran out: its error says what was left.
		return fmt.Errorf("%s: not done within --timeout %s: %w", doing, timeout, err)
	case cluster.IsConfigError(err) || isUsage(err):
		return err
	default:
		return fmt.Errorf("%s: %w", doing, err)
	}
}

// isUsage reports whether err is bad usage or input (exit 2).
func isUsage(err error) bool {
	var ue usageError
	return errors.As(err, &ue)
}

// isTTY says f is a terminal: a character device that answers a terminal
// ioctl (/dev/null is a character device too, and nobody answers there).
func isTTY(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}
