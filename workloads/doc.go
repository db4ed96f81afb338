// Package workloads renders the workload templates that make up a fleet's
// pod mix. Templates are YAML documents with Go text/template fields, embedded
// from this directory; _common.tpl holds shared snippets.
package workloads
