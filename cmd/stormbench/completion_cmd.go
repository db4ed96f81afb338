package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/stormbench/stormbench/bench/kubeversion"
	"github.com/stormbench/stormbench/bench/result"
	"github.com/stormbench/stormbench/profiles"
)

// newCompletionCmd prints cobra's completion script for a shell: commands,
// subcommands, flags and the values of the flags that register theirs
// (profile names, output formats, variants).
func newCompletionCmd(env *cmdEnv) *cobra.Command {
	gen := map[string]func(root *cobra.Command, w io.Writer) error{
		"bash":       func(root *cobra.Command, w io.Writer) error { return root.GenBashCompletionV2(w, true) },
		"zsh":        (*cobra.Command).GenZshCompletion,
		"fish":       func(root *cobra.Command, w io.Writer) error { return root.GenFishCompletion(w, true) },
		"powershell": (*cobra.Command).GenPowerShellCompletionWithDesc,
	}
	return &cobra.Command{
		Use:       "completion bash|zsh|fish|powershell",
		Short:     "Print a shell completion script: bash, zsh, fish or powershell",
		Long:      `Prints a shell completion script for commands, subcommands, flags and flag values (profile names, output formats, variants).`,
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		Example: `  source <(stormbench completion bash)            # bash, this shell
  stormbench completion bash > /etc/bash_completion.d/stormbench
  stormbench completion zsh > "${fpath[1]}/_stormbench"
  stormbench completion fish > ~/.config/fish/completions/stormbench.fish
  stormbench completion powershell | Out-String | Invoke-Expression`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("completion takes one shell: bash, zsh, fish or powershell")
			}
			g, ok := gen[args[0]]
			if !ok {
				return usagef("unknown shell %q: bash, zsh, fish or powershell", args[0])
			}
			if err := g(cmd.Root(), env.stdout); err != nil {
				return fmt.Errorf("writing the %s completion script: %w", args[0], err)
			}
			return nil
		},
	}
}

// completeValues completes the values of cmd's flag name with values.
func completeValues(cmd *cobra.Command, name string, values ...string) {
	_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}

// completeFlagValues completes, on every command below root, the values
// of the flags that mean the same everywhere: --profile with the built-in
// profiles' names (and files, a profile may be a YAML file), -o with text,
// json and yaml where the command has not registered other formats, and
// --kube-version with the supported versions.
func completeFlagValues(root *cobra.Command) {
	walk(root, func(c *cobra.Command) {
		if c.Flags().Lookup("profile") != nil {
			_ = c.RegisterFlagCompletionFunc("profile", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return profiles.Names(), cobra.ShellCompDirectiveDefault
			})
		}
		if _, ok := c.GetFlagCompletionFunc("output"); !ok && c.Flags().Lookup("output") != nil {
			completeValues(c, "output", "text", "json", "yaml")
		}
		if c.Flags().Lookup("kube-version") != nil {
			completeValues(c, "kube-version", mapped(kubeversion.Supported(), kubeversion.Version.Short)...)
		}
	})
}

// completeVariants completes a variant flag with the variant names of the
// result files that files picks from the command's arguments (and its
// parsed flags).
func completeVariants(files func(args []string) []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		var names []string
		for _, path := range files(args) {
			r, err := result.ReadFile(path)
			if err != nil {
				continue
			}
			for _, v := range r.Variants {
				if !slices.Contains(names, v.Variant) {
					names = append(names, v.Variant)
				}
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
