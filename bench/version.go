package bench

// Version is stormbench's release version.
const Version = "0.1.0"

// GitRevision is set at build time with -ldflags -X.
var GitRevision = "unknown"
