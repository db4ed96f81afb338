package main

import (
	"context"
	"fmt"

	"github.com/stormbench/stormbench/bench"
)

func runVersion(ctx context.Context, env *cmdEnv, args []string) error {
	var output string
	fs := newFlagSet(env, "version", `version [-o json|yaml]

Prints stormbench's version, git revision and the Kubernetes version it
builds and simulates.

Examples:
  stormbench version
  stormbench --version
  stormbench version -o json`)
	fs.StringVarP(&output, "output", "o", "", "Output format: text, json or yaml")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkFormat(output); err != nil {
		return err
	}
	v := map[string]string{"version": bench.Version, "gitRevision": bench.GitRevision, "kubernetes": "v1.36.3"}
	if output == "json" || output == "yaml" {
		return printStructured(env.stdout, output, v)
	}
	fmt.Fprintf(env.stdout, "stormbench %s (git %s), built for Kubernetes %s\n", bench.Version, bench.GitRevision, "v1.36.3")
	return nil
}
