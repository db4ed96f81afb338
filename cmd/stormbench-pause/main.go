// Command stormbench-pause is the one binary of the container image that
// stormbench's containerd-backed real nodes run (there is no registry
// here; the image is built from this binary and imported into each node's
// containerd as registry.k8s.io/pause:3.10, the image the fleet's pods
// name). It is a multi-call binary, by the name it is called as:
//
//   - pause (the image's entrypoint, and the sandbox image): sleep until
//     SIGINT or SIGTERM and reap children, as the Kubernetes pause
//     container does;
//   - cat FILE...: print the files (the fleet's exec probes cat a
//     mounted ConfigMap), failing when one cannot be read;
//   - true: exit 0;
//   - serve [HTTP-PORT [TCP-PORT]]: answer HTTP on HTTP-PORT (default
//     8080) and accept TCP connections on TCP-PORT (default 8081), for
//     HTTP and TCP probes; see server for making them fail on demand.
package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

func main() {
	name := filepath.Base(os.Args[0])
	args := os.Args[1:]
	// "stormbench-pause cat x" works as "cat x", for tests.
	if (name == "stormbench-pause" || name == "pause") && len(args) > 0 && (args[0] == "cat" || args[0] == "true" || args[0] == "serve") {
		name, args = args[0], args[1:]
	}
	switch name {
	case "cat":
		os.Exit(cat(args))
	case "true":
		os.Exit(0)
	case "serve":
		httpPort, tcpPort := "8080", "8081"
		if len(args) > 0 {
			httpPort = args[0]
		}
		if len(args) > 1 {
			tcpPort = args[1]
		}
		fmt.Fprintln(os.Stderr, serve(":"+httpPort, ":"+tcpPort))
		os.Exit(1)
	default:
		pause()
	}
}

func cat(files []string) int {
	code := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cat:", err)
			code = 1
			continue
		}
		_, _ = io.WriteString(os.Stdout, string(b))
	}
	return code
}

// pause sleeps until told to stop, reaping any child (as PID 1 of a pod
// sandbox it inherits orphans).
func pause() {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sig {
		if s == syscall.SIGCHLD {
			for {
				var ws syscall.WaitStatus
				pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
			continue
		}
		os.Exit(0)
	}
}
