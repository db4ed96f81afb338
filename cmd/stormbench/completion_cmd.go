package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// subcommands are the words that follow a command with subcommands.
var subcommands = map[string][]string{
	"cluster":   {"up", "down", "status"},
	"fleet":     {"up", "down", "snapshot"},
	"profiles":  {"list", "show", "validate"},
	"calibrate": {"combine"},
}

var flagName = regexp.MustCompile(`(?m)^\s+(?:-([A-Za-z]), )?--([a-z0-9][a-z0-9-]*)`)

// commandFlags lists a command's flags as its --help prints them, so that
// the completion scripts never drift from the flag sets.
func commandFlags(c command) []string {
	var out bytes.Buffer
	env := &cmdEnv{stdout: &out, stderr: io.Discard}
	args := []string{"--help"}
	if subs := subcommands[c.name]; len(subs) > 0 && c.name != "calibrate" {
		args = []string{subs[0], "--help"}
	}
	_ = c.run(context.Background(), env, args)
	var flags []string
	for _, m := range flagName.FindAllStringSubmatch(out.String(), -1) {
		if m[1] != "" {
			flags = append(flags, "-"+m[1])
		}
		flags = append(flags, "--"+m[2])
	}
	slices.Sort(flags)
	return slices.Compact(append(flags, "--help"))
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
