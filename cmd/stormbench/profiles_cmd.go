package main

import (
	"cmp"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/stormbench/stormbench/profiles"
)

func newProfilesCmd(env *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "profiles",
		Short: "List, show or validate storm profiles: list, show NAME, validate FILE...",
		Example: `  stormbench profiles list
  stormbench profiles show quick -o json
  stormbench profiles validate profiles/*.yaml my-storm.yaml`,
		RunE: needsSubcommand,
	}
	sub := func(use, short string, run func(o *profilesOptions, args []string) error) *cobra.Command {
		o := &profilesOptions{}
		c := &cobra.Command{
			Use:   use,
			Short: short,
			RunE: func(_ *cobra.Command, args []string) error {
				if err := checkFormat(o.output); err != nil {
					return err
				}
				return run(o, args)
			},
		}
		c.Flags().StringVarP(&o.output, "output", "o", "", "Output format: text, yaml or json (show: yaml unless json)")
		return c
	}
	show := sub("show NAME|FILE [flags]", "Print a profile resolved with its defaults (validated)", func(o *profilesOptions, args []string) error {
		if len(args) != 1 {
			return usagef("profiles show takes one profile name or file")
		}
		return o.show(env, args[0])
	})
	show.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return profiles.Names(), cobra.ShellCompDirectiveDefault
	}
	validate := sub("validate FILE... [flags]", "Check profiles, every error with its field path", func(o *profilesOptions, args []string) error {
		if len(args) == 0 {
			return usagef("profiles validate needs at least one profile file or name")
		}
		return o.validate(env, args)
	})
	validate.Long = `Checks profiles: every type error, unknown field and bad value with its
field path; exit 0 when all are valid, 2 when one is not (for CI and
pre-commit).`
	cmd.AddCommand(
		sub("list [flags]", "List the built-in profiles", func(o *profilesOptions, args []string) error {
			if len(args) != 0 {
				return usagef("profiles list takes no arguments")
			}
			return o.list(env)
		}),
		show,
		validate,
	)
	return cmd
}

// profilesOptions are the flags of profiles list, show and validate.
type profilesOptions struct {
	// output is the format: "" or text, json, yaml.
	output string
}

// structured reports whether the output is json or yaml.
func (o *profilesOptions) structured() bool { return o.output == "json" || o.output == "yaml" }

// list lists the built-in profiles.
func (o *profilesOptions) list(env *cmdEnv) error {
	var all []*profiles.Profile
	for _, n := range profiles.Names() {
		p, err := profiles.Load(n)
		if err != nil {
			return fmt.Errorf("built-in profile %s: %w", n, err)
		}
		all = append(all, p)
	}
	return printAs(env.stdout, o.output, all, func() error {
		return writeTable(env.stdout, "NAME\tNODES\tPODS/NODE\tSTORM\tVARIANTS\tDESCRIPTION", all, func(p *profiles.Profile) string {
			return fmt.Sprintf("%s\t%d\t%d\t%s\t%d\t%s", p.Metadata.Name, p.Fleet.Nodes, p.Fleet.PodsPerNode, cmp.Or(p.StormKind(), "-"), len(p.ResolvedVariants()), p.Metadata.Description)
		})
	})
}

// validate checks each profile and says what is wrong with the invalid
// ones; a usage error (exit 2) when one is.
func (o *profilesOptions) validate(env *cmdEnv, refs []string) error {
	invalid := 0
	var checked []validation
	for _, ref := range refs {
		p, err := profiles.Load(ref)
		if err != nil {
			invalid++
			checked = append(checked, validation{File: ref, Error: err.Error()})
			if !o.structured() {
				fmt.Fprintf(env.stderr, "%s: %v\n", ref, err)
			}
			continue
		}
		v := validation{File: ref, Valid: true, Profile: p.Metadata.Name, Nodes: p.Fleet.Nodes, Variants: len(p.ResolvedVariants())}
		checked = append(checked, v)
		if !o.structured() {
			fmt.Fprintf(env.stdout, "%s: valid (profile %s, %d nodes, %d %s)\n", ref, v.Profile, v.Nodes, v.Variants, fmtBool(v.Variants == 1, "variant", "variants"))
		}
	}
	if o.structured() {
		if err := printStructured(env.stdout, o.output, checked); err != nil {
			return err
		}
	}
	if invalid > 0 {
		return usagef("%d of %d profiles invalid", invalid, len(refs))
	}
	return nil
}

// show prints a profile resolved with its defaults: yaml unless json.
func (o *profilesOptions) show(env *cmdEnv, ref string) error {
	p, err := profiles.Load(ref)
	if err != nil {
		return err
	}
	output := o.output
	if !o.structured() {
		output = "yaml"
	}
	return printStructured(env.stdout, output, p)
}

// validation is one file's verdict in profiles validate -o json|yaml.
type validation struct {
	File     string `json:"file"`
	Valid    bool   `json:"valid"`
	Profile  string `json:"profile,omitempty"`
	Nodes    int    `json:"nodes,omitempty"`
	Variants int    `json:"variants,omitempty"`
	// Error is why the file is invalid, with field paths.
	Error string `json:"error,omitempty"`
}
