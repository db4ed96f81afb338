package main

import (
	"encoding/json"
	"io"

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
