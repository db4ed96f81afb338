package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// subcommands are the words that follow a command with subcommands, by
// the command's path ("fleet snapshot" is a subcommand's).
var subcommands = map[string][]string{
	"cluster":        {"up", "down", "status"},
	"fleet":          {"up", "down", "snapshot"},
	"fleet snapshot": {"save", "restore"},
	"profiles":       {"list", "show", "validate"},
	"calibrate":      {"combine"},
}

// commandPaths are the argument lists that ask each of a command's
// commands and subcommands for --help: calibrate has flags of its own
// beside its subcommand, the others' subcommands hold every flag.
func commandPaths(name string, prefix []string) [][]string {
	subs := subcommands[strings.Join(append([]string{name}, prefix...), " ")]
	var paths [][]string
	if len(subs) == 0 || name == "calibrate" {
		paths = append(paths, append(slices.Clone(prefix), "--help"))
	}
	for _, sub := range subs {
		paths = append(paths, commandPaths(name, append(slices.Clone(prefix), sub))...)
	}
	return paths
}

// commandFlags lists the flags a command's flag sets declare (its
// subcommands' too), read from the pflag sets themselves: the command is
// asked for --help with a cmdEnv that hands over each flag set it builds.
// Deprecated and hidden flags are left out, as --help leaves them out.
func commandFlags(c command) []string {
	var sets []*pflag.FlagSet
	env := &cmdEnv{stdout: io.Discard, stderr: io.Discard, flagSet: func(fs *pflag.FlagSet) { sets = append(sets, fs) }}
	for _, args := range commandPaths(c.name, nil) {
		_ = c.run(context.Background(), env, args)
	}
	flags := []string{"--help"}
	for _, fs := range sets {
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Deprecated != "" || f.Hidden {
				return
			}
			if f.Shorthand != "" && f.ShorthandDeprecated == "" {
				flags = append(flags, "-"+f.Shorthand)
			}
			flags = append(flags, "--"+f.Name)
		})
	}
	slices.Sort(flags)
	return slices.Compact(flags)
}

func runCompletion(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "completion", `completion bash|zsh|fish

Prints a shell completion script for commands, subcommands and flags.

Examples:
  source <(stormbench completion bash)            # bash, this shell
  stormbench completion bash > /etc/bash_completion.d/stormbench
  stormbench completion zsh > "${fpath[1]}/_stormbench"
  stormbench completion fish > ~/.config/fish/completions/stormbench.fish
`)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("completion takes one shell: bash, zsh or fish")
	}
	var cmds []command
	for _, c := range commands() {
		if c.name != "completion" {
			cmds = append(cmds, c)
		}
	}
	switch fs.Arg(0) {
	case "bash":
		fmt.Fprint(env.stdout, bashCompletion(cmds))
	case "zsh":
		fmt.Fprint(env.stdout, "#compdef stormbench\nautoload -U +X bashcompinit && bashcompinit\n"+bashCompletion(cmds))
	case "fish":
		fmt.Fprint(env.stdout, fishCompletion(cmds))
	default:
		return usagef("unknown shell %q: bash, zsh or fish", fs.Arg(0))
	}
	return nil
}

func bashCompletion(cmds []command) string {
	var names []string
	var b strings.Builder
	for _, c := range cmds {
		names = append(names, c.name)
	}
	b.WriteString("# stormbench completion for bash (stormbench completion bash)\n_stormbench() {\n")
	b.WriteString("  local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]} words=\"\"\n")
	fmt.Fprintf(&b, "  if [[ $COMP_CWORD -eq 1 ]]; then\n    COMPREPLY=($(compgen -W %q -- \"$cur\"))\n    return\n  fi\n", strings.Join(append(names, "help", "--version"), " "))
	b.WriteString("  case $cmd in\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "  %s) words=%q ;;\n", c.name, strings.Join(commandFlags(c), " "))
	}
	b.WriteString("  help) COMPREPLY=($(compgen -W \"" + strings.Join(names, " ") + "\" -- \"$cur\")); return ;;\n  esac\n")
	b.WriteString("  if [[ $COMP_CWORD -eq 2 && $cur != -* ]]; then\n    case $cmd in\n")
	for _, c := range cmds {
		if subs := subcommands[c.name]; len(subs) > 0 {
			fmt.Fprintf(&b, "    %s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", c.name, strings.Join(subs, " "))
		}
	}
	b.WriteString("    esac\n  fi\n")
	b.WriteString("  if [[ $COMP_CWORD -eq 3 && $cur != -* ]]; then\n    case \"$cmd ${COMP_WORDS[2]}\" in\n")
	for _, path := range slices.Sorted(maps.Keys(subcommands)) {
		if strings.Contains(path, " ") {
			fmt.Fprintf(&b, "    %q) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", path, strings.Join(subcommands[path], " "))
		}
	}
	b.WriteString("    esac\n  fi\n")
	b.WriteString("  if [[ $cur == -* ]]; then\n    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n  else\n    COMPREPLY=($(compgen -f -- \"$cur\"))\n  fi\n}\ncomplete -o filenames -F _stormbench stormbench\n")
	return b.String()
}

func fishCompletion(cmds []command) string {
	var b strings.Builder
	b.WriteString("# stormbench completion for fish (stormbench completion fish)\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "complete -c stormbench -n __fish_use_subcommand -a %s -d %q\n", c.name, c.short)
	}
	for _, c := range cmds {
		if subs := subcommands[c.name]; len(subs) > 0 {
			fmt.Fprintf(&b, "complete -c stormbench -n '__fish_seen_subcommand_from %s' -a %q\n", c.name, strings.Join(subs, " "))
		}
		for _, sub := range subcommands[c.name] {
			if subs := subcommands[c.name+" "+sub]; len(subs) > 0 {
				fmt.Fprintf(&b, "complete -c stormbench -n '__fish_seen_subcommand_from %s; and __fish_seen_subcommand_from %s' -a %q\n", c.name, sub, strings.Join(subs, " "))
			}
		}
		for _, f := range commandFlags(c) {
			if long, ok := strings.CutPrefix(f, "--"); ok {
				fmt.Fprintf(&b, "complete -c stormbench -n '__fish_seen_subcommand_from %s' -l %s\n", c.name, long)
			} else {
				fmt.Fprintf(&b, "complete -c stormbench -n '__fish_seen_subcommand_from %s' -s %s\n", c.name, strings.TrimPrefix(f, "-"))
			}
		}
	}
	return b.String()
}
