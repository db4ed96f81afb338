// Package profiles holds stormbench's storm profiles: the typed, versioned
// YAML format, the strict loader with field-path validation, and the built-in
// profiles embedded from this directory.
package profiles
