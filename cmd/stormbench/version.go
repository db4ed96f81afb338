package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/stormbench/stormbench/bench"
	"github.com/stormbench/stormbench/bench/kubeversion"
)

func newVersionCmd(env *cmdEnv) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version [-o json|yaml]",
		Short: "Print the stormbench version",
		Long: `Prints stormbench's version, git revision and the Kubernetes version it
builds and simulates.`,
		Example: `  stormbench version
  stormbench --version
  stormbench version -o json`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return printVersion(env, output) },
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: text, json or yaml")
	return cmd
}

// printVersion prints the version in the format of -o; an error when
// stdout cannot be written.
func printVersion(env *cmdEnv, output string) error {
	if err := checkFormat(output); err != nil {
		return err
	}
	v := map[string]any{"version": bench.Version, "gitRevision": bench.GitRevision, "kubernetes": kubeversion.Default.String(),
		"kubernetesSupported": mapped(kubeversion.Supported(), kubeversion.Version.String)}
	if output == "json" || output == "yaml" {
		return printStructured(env.stdout, output, v)
	}
	if _, err := fmt.Fprintf(env.stdout, "stormbench %s (git %s), for Kubernetes %s\n", bench.Version, bench.GitRevision, kubeversion.SupportedList()); err != nil {
		return fmt.Errorf("writing the version: %w", err)
	}
	return nil
}
