// Command pause is the sandbox program of the real node's pods (internal/harness Node): containerd runs it as the
// first process of every pod to hold the pod's namespaces, the role Kubernetes' own pause image plays. It does
// nothing until SIGTERM or SIGINT, then exits 0. It is packed into the node's pause image by release/image, so the
// node needs no image from outside. It links the CA roots every image built by release/image must carry.
package main

import (
	"os"
	"os/signal"
	"syscall"

	_ "golang.org/x/crypto/x509roots/fallback"
)

func main() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	<-ch
}
