// Command hello is the smallest binary an image test builds: it links the CA roots every KOF image needs.
package main

import (
	"crypto/x509"
	"fmt"

	_ "golang.org/x/crypto/x509roots/fallback"
)

func main() {
	pool, err := x509.SystemCertPool()
	fmt.Println(pool != nil, err)
}
