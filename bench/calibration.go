package bench

import (
	"time"

	"github.com/stormbench/stormbench/bench/calibrate"
	"github.com/stormbench/stormbench/bench/kubelet"
)

// CalibrationModel is the model a calibration judges
// (calibrate.Options.Model): each case's simulated kubelets, of the
// embedded cluster's version (the real kubelets' own), with the case's
// kind, gates and runtime mode and the calibration's seed, flash and
// client limits. Set it once o's cluster, target and run ID are.
func CalibrationModel(o calibrate.Options) func(calibrate.Case) (calibrate.Model, error) {
	return func(cs calibrate.Case) (calibrate.Model, error) {
		return kubelet.NewSimulator(kubelet.Config{
			Base: o.Target.Config, Harness: o.Target.Client, RunID: o.RunID, Kind: cs.Kind,
			Version: o.Embedded.KubeVersion(), Gates: cs.Gates, RuntimeMode: cs.RuntimeMode,
			InitDuration: o.InitDuration, Seed: o.Seed, RecoveryTimeout: 5 * time.Minute,
			KubeAPIQPS: o.KubeAPIQPS, KubeAPIBurst: o.KubeAPIBurst,
		})
	}
}
