package calibrate

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/stormbench/stormbench/bench/cluster"
	"github.com/stormbench/stormbench/bench/fleet"
	"github.com/stormbench/stormbench/bench/realnode"
	"github.com/stormbench/stormbench/profiles"
)

// The calibration's nodes and pods: provisioning, the probes and pod features, and teardown.

// provision builds the calibration's fleet (fleetPlan) with the run's
// fleet builder: the namespace, the simulated and bystander KWOK nodes,
// the real nodes' processes (startReal), each node's Deployment and
// Service; then waits until everything is Ready and settled.
func (c *calibration) provision(ctx context.Context) error {
	f, err := fleet.FromPlan(c.o.Target.Client, c.fleetPlan(), fleet.Options{CreateParallelism: profiles.DefaultCreateParallelism, ReadyTimeout: 4 * time.Minute}, nil)
	if err != nil {
		return err
	}
	f.SetClock(c.o.Clock)
	f.SetRealNodeStarter(c.startReal)
	if err := f.Up(ctx); err != nil {
		return err
	}
	return c.settle(ctx, 4*time.Minute)
}

// fleetPlan is the calibration's fleet: K simulated KWOK nodes (the
// fleet's first K names), 2K bystanders, K real nodes, and a Deployment and
// Service pinned to each real and simulated node, with the objects its pod
// features reference. No node carries a profile's workloads.
func (c *calibration) fleetPlan() *fleet.Plan {
	p := &fleet.Plan{
		RunID: c.o.RunID, Namespace: c.ns, RealNodes: c.real.nodes,
		Nodes:        len(c.sim.nodes) + len(c.bystanders) + len(c.real.nodes),
		ExpectedPods: (len(c.sim.nodes) + len(c.real.nodes)) * c.o.PodsPerNode,
	}
	for i := range c.sim.nodes {
		p.KWOKNodes = append(p.KWOKNodes, fleet.NodeSpec{RunID: c.o.RunID, Index: i, CPU: "32", Memory: "256Gi", Pods: 110})
	}
	for j, name := range c.bystanders {
		// Healthy nodes beside the restarted ones, as any real cluster
		// has: KWOK keeps them Ready and nothing restarts them. Without
		// them every node of the cluster goes NotReady together in a
		// runtime restart, and the node-lifecycle controller enters its
		// "all Nodes are not-Ready" disruption mode, in which it takes
		// the NoExecute taints off again (node_lifecycle_controller.go
		// handleDisruption); which side it had tainted by then depended
		// only on which went NotReady first. 2K bystanders keep the zone
		// below the unhealthy-zone threshold (0.55; ComputeZoneState), so
		// its NoExecute tainting runs as in a healthy cluster.
		p.KWOKNodes = append(p.KWOKNodes, fleet.NodeSpec{RunID: c.o.RunID, Index: c.o.Nodes + j, Name: name,
			Labels: map[string]string{RoleLabel: "bystander"}, CPU: "32", Memory: "256Gi", Pods: 110})
	}
	// What the pods reference goes first, as the fleet creates it.
	var deps, workloads []runtime.Object
	for _, node := range c.allNodes() {
		d, w := c.workload(node)
		deps, workloads = append(deps, d...), append(workloads, w...)
		p.Services++
	}
	p.Objects = append(deps, workloads...)
	return p
}

// startReal starts the real kubelets (the fleet's real node starter),
// waits until every node is Ready, and for the real nodes' first leases.
func (c *calibration) startReal(ctx context.Context, _ []string) error {
	dir := filepath.Join(c.o.Embedded.Dir(), cluster.RealNodesDir)
	for i, name := range c.real.nodes {
		opts := realnode.Options{
			Components: c.o.Embedded.Components(), AdminKubeconfig: c.o.Embedded.Kubeconfig(), Context: c.o.Target.Context,
			Dir: filepath.Join(dir, name), Name: name, PodCIDR: fleet.PodCIDR(MaxNodes + i),
			Labels: map[string]string{fleet.RunLabel: c.o.RunID, fleet.TypeLabel: fleet.RealNodeType, RoleLabel: "real"},
			CPU:    "32", Memory: "256Gi", MaxPods: 110,
			KubeAPIQPS: c.o.KubeAPIQPS, KubeAPIBurst: c.o.KubeAPIBurst,
		}
		// On containerd, the machine's capacity is the node's: CPU and
		// memory are what cAdvisor reads.
		if err := realnode.Start(opts, c.o.Backend == BackendContainerd, func(n realnode.Runner) { c.nodes[name] = n }); err != nil {
			return err
		}
	}
	c.o.Logf("Started %d %s kubelets (logs under %s)", len(c.real.nodes), c.o.Backend, dir)
	if err := c.waitNodes(ctx, 2*time.Minute); err != nil {
		return err
	}
	// A kubelet's first lease is created only once its node is registered
	// (the lease controller's owner-reference hook retries about 10 s
	// later): wait for it, so that no case counts a first start's lease
	// creation as a restart's.
	return c.waitFor(ctx, "waiting for the real nodes' first leases", time.Minute, func() (string, error) {
		for _, name := range c.real.nodes {
			if _, err := c.o.Target.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{}); err != nil {
				return "lease of " + name + ": " + err.Error(), nil
			}
		}
		return "", nil
	})
}

// Bystanders is the number of healthy KWOK nodes a calibration of k real
// and k simulated nodes adds beside them (see provision).
func Bystanders(k int) int { return 2 * k }

// NodeEvictionRate is the calibration cluster's --node-eviction-rate,
// nodes per second and zone. The node-lifecycle controller adds its
// NoExecute not-ready taints through a token bucket of this rate with a
// burst of 1 (nodelifecycle zoneNoExecuteTainter); at the default 0.1/s
// the 2K nodes a runtime restart takes NotReady at once would be tainted
// 10 s apart, in the order they went NotReady, and the later ones not at
// all in a 20 s outage, so each side's taint writes would depend on the
// other side's timing. At 100/s every NotReady node is tainted at the
// controller's next 5 s pass, as one node among many healthy ones is in a
// real cluster.
const NodeEvictionRate = 100

// RoleLabel marks a calibration node as real, simulated or bystander.
const RoleLabel = "stormbench.io/calibration"

// workload is node's Deployment (pinned to it, exec readiness and
// liveness probes: what a hollow kubelet's fake runtime can answer) and a
// Service over it, after the objects its pod features reference.
func (c *calibration) workload(node string) (deps, workload []runtime.Object) {
	labels := map[string]string{"app": node, fleet.RunLabel: c.o.RunID}
	period := int32(c.o.ProbePeriod / time.Second)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: c.ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(c.o.PodsPerNode)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": node}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{corev1.LabelHostname: node},
					Tolerations:  []corev1.Toleration{{Key: fleet.KwokTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					// No service-account token: the projected token's
					// TokenRequest is the same on both sides and would
					// only add noise.
					AutomountServiceAccountToken: ptr.To(false),
					Containers: []corev1.Container{{
						Name: "app", Image: "registry.k8s.io/pause:3.10", ImagePullPolicy: corev1.PullIfNotPresent,
						ReadinessProbe: &corev1.Probe{PeriodSeconds: period, FailureThreshold: 3},
						LivenessProbe:  &corev1.Probe{PeriodSeconds: period, FailureThreshold: 3},
					}},
				},
			},
		},
	}
	setProbe(&dep.Spec.Template.Spec, c.probe)
	deps = c.addPodFeatures(node, &dep.Spec.Template.Spec)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: c.ns, Labels: labels},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": node},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	return append(deps, svc), []runtime.Object{dep}
}

// setProbe gives the container of a calibration pod spec the probe
// handler (ProbeExec, ProbeHTTP or ProbeTCP) on its readiness, liveness
// and startup probes, and the command that answers it: stormbench-pause's
// pause for exec probes (the kubelet runs "true" beside it), its server
// for network probes. Periods and thresholds stay as they are.
func setProbe(spec *corev1.PodSpec, probe string) {
	ctr := &spec.Containers[0]
	var h corev1.ProbeHandler
	ctr.Command = []string{"serve", strconv.Itoa(httpProbePort), strconv.Itoa(tcpProbePort)}
	switch probe {
	case ProbeHTTP:
		h.HTTPGet = &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(httpProbePort)}
	case ProbeTCP:
		h.TCPSocket = &corev1.TCPSocketAction{Port: intstr.FromInt32(tcpProbePort)}
	default:
		h.Exec = &corev1.ExecAction{Command: []string{"true"}}
		ctr.Command = nil
	}
	for _, p := range []*corev1.Probe{ctr.ReadinessProbe, ctr.LivenessProbe, ctr.StartupProbe} {
		if p != nil {
			p.ProbeHandler = *h.DeepCopy()
		}
	}
	if ctr.LivenessProbe != nil && h.HTTPGet != nil {
		ctr.LivenessProbe.HTTPGet.Path = "/livez"
	}
}

// podProbe returns the probe handler of a calibration pod's readiness
// probe: ProbeExec, ProbeHTTP, ProbeTCP, or "" when it has none.
func podProbe(p *corev1.Pod) string {
	if len(p.Spec.Containers) == 0 || p.Spec.Containers[0].ReadinessProbe == nil {
		return ""
	}
	switch h := p.Spec.Containers[0].ReadinessProbe; {
	case h.HTTPGet != nil:
		return ProbeHTTP
	case h.TCPSocket != nil:
		return ProbeTCP
	case h.Exec != nil:
		return ProbeExec
	}
	return ""
}

// reprobe rolls every node's Deployment to pods with the probe handler
// (setProbe); the next settle waits for the rollout.
func (c *calibration) reprobe(ctx context.Context, probe string) error {
	c.o.Logf("Rolling the pods of every node to %s probes", probe)
	c.probe = probe
	for _, node := range c.allNodes() {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			dep, err := c.o.Target.Client.AppsV1().Deployments(c.ns).Get(ctx, node, metav1.GetOptions{})
			if err != nil {
				return err
			}
			setProbe(&dep.Spec.Template.Spec, probe)
			_, err = c.o.Target.Client.AppsV1().Deployments(c.ns).Update(ctx, dep, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("rolling deployment %s to %s probes: %w", node, probe, err)
		}
	}
	return nil
}

// addPodFeatures adds the options' pod features to a node's pod spec and
// returns the objects they reference, named after the node.
func (c *calibration) addPodFeatures(node string, spec *corev1.PodSpec) []runtime.Object {
	ctr := &spec.Containers[0]
	var objs []runtime.Object
	for _, f := range c.o.PodFeatures {
		switch f {
		case PodFeatureStartupProbe:
			ctr.StartupProbe = &corev1.Probe{ProbeHandler: ctr.ReadinessProbe.ProbeHandler, PeriodSeconds: ctr.ReadinessProbe.PeriodSeconds, FailureThreshold: 30}
		case PodFeatureAutomount:
			spec.AutomountServiceAccountToken = ptr.To(true)
		case PodFeatureObjectRefs:
			labels := map[string]string{fleet.RunLabel: c.o.RunID}
			objs = append(objs,
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: node + "-env", Namespace: c.ns, Labels: labels}, Data: map[string]string{"MODE": "calibration"}},
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: node + "-immutable", Namespace: c.ns, Labels: labels}, Data: map[string]string{"app.conf": "listen 8080\n"}, Immutable: ptr.To(true)},
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: node + "-projected", Namespace: c.ns, Labels: labels}, Data: map[string]string{"extra.conf": "x\n"}},
				&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: node + "-secret", Namespace: c.ns, Labels: labels}, StringData: map[string]string{"token": "calibration"}})
			ctr.EnvFrom = append(ctr.EnvFrom, corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: node + "-env"}}})
			ctr.Env = append(ctr.Env, corev1.EnvVar{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: node + "-secret"}, Key: "token"}}})
			spec.Volumes = append(spec.Volumes,
				corev1.Volume{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: node + "-immutable"}}}},
				corev1.Volume{Name: "extra", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: node + "-projected"}}}}}}})
			ctr.VolumeMounts = append(ctr.VolumeMounts,
				corev1.VolumeMount{Name: "conf", MountPath: "/etc/app"}, corev1.VolumeMount{Name: "extra", MountPath: "/etc/extra"})
		}
	}
	return objs
}

// allNodes lists real then simulated nodes.
func (c *calibration) allNodes() []string {
	return slices.Concat(c.real.nodes, c.sim.nodes)
}

// scale sets the replicas of the Deployments of nodes.
func (c *calibration) scale(ctx context.Context, nodes []string, replicas int) error {
	// A patch of the scale, not a read and an update: the deployment
	// controller writes the Deployment's status meanwhile, and an update
	// of the scale read before would conflict with it.
	patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
	for _, node := range nodes {
		if _, err := c.o.Target.Client.AppsV1().Deployments(c.ns).Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{}, "scale"); err != nil {
			return fmt.Errorf("scaling deployment %s to %d: %w", node, replicas, err)
		}
	}
	return nil
}

// teardown stops the real kubelets, then deletes the run's namespace and
// nodes.
func (c *calibration) teardown(ctx context.Context) error {
	var errs []error
	for _, name := range c.real.nodes {
		if n, ok := c.nodes[name]; ok {
			if err := n.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("stopping real node %s: %w", name, err))
			}
		}
	}
	if c.o.KeepObjects {
		return errors.Join(errs...)
	}
	// fleet.Delete force-deletes the pods of the stopped real kubelets
	// (type=hollow), which would never confirm their deletion.
	if err := fleet.Delete(ctx, c.o.Target.Client, c.o.RunID, 4*time.Minute, nil); err != nil {
		errs = append(errs, fmt.Errorf("deleting calibration objects: %w (remove them with `stormbench fleet down --run-id %s`)", err, c.o.RunID))
	}
	return errors.Join(errs...)
}
