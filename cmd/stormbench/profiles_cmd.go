package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/stormbench/stormbench/profiles"
)

func runProfiles(ctx context.Context, env *cmdEnv, args []string) error {
	sub, rest, err := subcommand(args, "list", "show")
	if err != nil {
		return err
	}
	if sub == "help" {
		fmt.Fprint(env.stdout, "Usage: stormbench profiles list|show NAME|FILE [-o yaml|json]\n\n  list  list the built-in profiles\n  show  print a profile resolved with its defaults (validated)\n")
		return nil
	}
	var output string
	fs := newFlagSet(env, "profiles "+sub, "profiles "+sub+" [NAME|FILE] [flags]")
	fs.StringVarP(&output, "output", "o", "", "Output format: text (list only), yaml or json")
	if err := parse(fs, rest); err != nil {
		return err
	}
	if err := checkFormat(output); err != nil {
		return err
	}
	switch sub {
	case "list":
		if fs.NArg() != 0 {
			return usagef("profiles list takes no arguments")
		}
		var all []*profiles.Profile
		for _, n := range profiles.Names() {
			p, err := profiles.Load(n)
			if err != nil {
				return fmt.Errorf("built-in profile %s: %w", n, err)
			}
			all = append(all, p)
		}
		if output == "json" || output == "yaml" {
			return printStructured(env.stdout, output, all)
		}
		tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tNODES\tPODS/NODE\tSTORM\tVARIANTS\tDESCRIPTION")
		for _, p := range all {
			kind := "-"
			if p.Storm != nil {
				kind = p.Storm.Kind
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%s\n", p.Metadata.Name, p.Fleet.Nodes, p.Fleet.PodsPerNode, kind, len(p.ResolvedVariants()), p.Metadata.Description)
		}
		return tw.Flush()
	default:
		if fs.NArg() != 1 {
			return usagef("profiles show takes one profile name or file")
		}
		p, err := profiles.Load(fs.Arg(0))
		if err != nil {
			return err
		}
		if output == "" || output == "text" {
			output = "yaml"
		}
		return printStructured(env.stdout, output, p)
	}
}
