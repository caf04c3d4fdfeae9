package collector

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// envRef is a collector config's environment reference `${env:NAME}`.
var envRef = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandEnv replaces every `${env:NAME}` of s by env[NAME] ("" when unset, as the collector does).
func expandEnv(s string, env map[string]string) string {
	return envRef.ReplaceAllStringFunc(s, func(ref string) string { return env[envRef.FindStringSubmatch(ref)[1]] })
}

// environ returns env as `NAME=value` entries in name order.
func environ(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// OnNode takes a collector config body, the container's mount paths, its environment and a scratch folder root and
// returns a copy of body as it reads on a node whose container mounts are folders under root: every string
// that is a path under one of mounts gets root prefixed, each mount's folder is made, and every file a `*_file` key
// names under a mount (after `${env:...}` expansion with env) is made empty, standing in for the node's file (the
// collector checks such files exist at start; their content is the node's, not the render's). Nothing outside
// root is touched.
func OnNode(body map[string]any, mounts []string, env map[string]string, root string) (map[string]any, error) {
	for _, m := range mounts {
		if err := os.MkdirAll(filepath.Join(root, m), 0o755); err != nil {
			return nil, fmt.Errorf("mount %s: %w", m, err)
		}
	}
	under := func(s string) bool {
		for _, m := range mounts {
			if s == m || strings.HasPrefix(s, strings.TrimSuffix(m, "/")+"/") {
				return true
			}
		}
		return false
	}
	var walk func(key string, v any) (any, error)
	walk = func(key string, v any) (any, error) {
		switch x := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				w, err := walk(k, e)
				if err != nil {
					return nil, err
				}
				out[k] = w
			}
			return out, nil
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				w, err := walk(key, e)
				if err != nil {
					return nil, err
				}
				out[i] = w
			}
			return out, nil
		case string:
			if !under(x) {
				return x, nil
			}
			local := root + x
			if strings.HasSuffix(key, "_file") {
				file := expandEnv(local, env)
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					return nil, fmt.Errorf("%s %s: %w", key, x, err)
				}
				if err := os.WriteFile(file, nil, 0o600); err != nil {
					return nil, fmt.Errorf("%s %s: %w", key, x, err)
				}
			}
			return local, nil
		default:
			return v, nil
		}
	}
	out, err := walk("", body)
	if err != nil {
		return nil, err
	}
	return out.(map[string]any), nil
}

// ServiceAccountDir is where a pod finds its service account's token and the cluster CA; receivers with
// `auth_type: serviceAccount` read them from this fixed path when they start.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// podScript runs "$@" in a private mount namespace whose /run is a fresh tmpfs holding the service account folder
// copied from "$0" (ServiceAccountDir is under /run by way of /var/run): the host's /run is never touched.
const podScript = `set -e
mount -t tmpfs tmpfs /run
mkdir -p ` + ServiceAccountDir + `
cp "$0"/* ` + ServiceAccountDir + `/
exec "$@"`

// writeServiceAccount writes the stand-in service account of a pod into dir: `token` and a self-signed `ca.crt`
// (a cluster CA in form; no API server is reached by `otelcol validate`).
func writeServiceAccount(dir string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("service account CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("service account CA: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "token"), []byte("stand-in-token"), 0o600)
}

// podCommand returns the command that runs binary with args as in a pod: in a user and mount namespace of its own
// (unshare, no privilege needed) with the stand-in service account of saDir at ServiceAccountDir, and env as its
// environment (plus PATH, for the namespace's setup).
func podCommand(ctx context.Context, saDir string, env map[string]string, binary string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "unshare", append([]string{"--user", "--map-root-user", "--mount", "sh", "-c",
		podScript, saDir, binary}, args...)...)
	cmd.Env = append(environ(env), "PATH="+os.Getenv("PATH"))
	return cmd
}
