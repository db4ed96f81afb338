package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"sigs.k8s.io/yaml"
)

// printStructured writes v as JSON or YAML; format "" or "text" is the
// caller's business.
func printStructured(w io.Writer, format string, v any) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "yaml":
		data, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	default:
		return usagef("unknown output format %q: one of text, json, yaml", format)
	}
}

// printAs writes v as JSON or YAML when format names one of them, else
// what text writes.
func printAs(w io.Writer, format string, v any, text func() error) error {
	if format == "json" || format == "yaml" {
		return printStructured(w, format, v)
	}
	return text()
}

// writeTable writes header and a line per row, their tab-separated cells
// aligned in columns two blanks apart.
func writeTable[T any](w io.Writer, header string, rows []T, line func(T) string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		fmt.Fprintln(tw, line(r))
	}
	return tw.Flush()
}

func checkFormat(format string) error {
	switch format {
	case "", "text", "json", "yaml":
		return nil
	}
	return usagef("unknown output format %q (-o): one of text, json, yaml", format)
}

func fmtBool(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}
