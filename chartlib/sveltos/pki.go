package sveltos

import (
	"crypto"
	"crypto/ed25519"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"math/rand"
	"net"
	"reflect"
	"text/template"
	"time"
)

// certificate is what the pinned gen* functions return: the fields sprig's certificate exposes to templates.
type certificate struct {
	Cert string
	Key  string
}

// pinCrypto replaces sprig's gen* functions with deterministic ones. Go cannot derive RSA or ECDSA keys from a
// seeded source, so every generated key is an Ed25519 key drawn from rng (PKCS#8 PEM), and certificates are
// valid from now for the requested days, with serial numbers from rng. Keys passed in by the template
// (the *WithKey variants) are used as given. Source: sprig v3.3.0 crypto.go (function names and arguments).
func pinCrypto(fm template.FuncMap, now time.Time, rng *rand.Rand) {
	newKey := func() ed25519.PrivateKey {
		seed := make([]byte, ed25519.SeedSize)
		_, _ = rng.Read(seed)
		return ed25519.NewKeyFromSeed(seed)
	}
	p := pki{now: now, rng: rng}
	fm["genPrivateKey"] = func(typ string) string {
		switch typ {
		case "", "rsa", "dsa", "ecdsa", "ed25519":
			s, err := keyPEM(newKey())
			if err != nil {
				return fmt.Sprintf("failed to generate private key: %s", err)
			}
			return s
		}
		return "Unknown type " + typ
	}
	fm["genCA"] = func(cn string, days int) (certificate, error) {
		return p.issue(cn, nil, nil, days, true, newKey(), certificate{})
	}
	fm["genCAWithKey"] = func(cn string, days int, key string) (certificate, error) {
		return p.issueWithPEM(cn, nil, nil, days, true, key, certificate{})
	}
	fm["genSelfSignedCert"] = func(cn string, ips, dns []any, days int) (certificate, error) {
		return p.issue(cn, ips, dns, days, false, newKey(), certificate{})
	}
	fm["genSelfSignedCertWithKey"] = func(cn string, ips, dns []any, days int, key string) (certificate, error) {
		return p.issueWithPEM(cn, ips, dns, days, false, key, certificate{})
	}
	fm["genSignedCert"] = func(cn string, ips, dns []any, days int, ca any) (certificate, error) {
		return p.issue(cn, ips, dns, days, false, newKey(), certOf(ca))
	}
	fm["genSignedCertWithKey"] = func(cn string, ips, dns []any, days int, ca any, key string) (certificate, error) {
		return p.issueWithPEM(cn, ips, dns, days, false, key, certOf(ca))
	}
}

// pki issues certificates at a fixed time with serials from a seeded source.
type pki struct {
	now time.Time
	rng *rand.Rand
}

// issueWithPEM parses key and issues a certificate for it.
func (p pki) issueWithPEM(cn string, ips, dns []any, days int, isCA bool, key string, ca certificate) (certificate, error) {
	signer, err := parseKeyPEM(key)
	if err != nil {
		return certificate{}, fmt.Errorf("error parsing private key: %w", err)
	}
	return p.issue(cn, ips, dns, days, isCA, signer, ca)
}

// issue makes a certificate for key, self-signed when ca is empty, else signed by ca.
func (p pki) issue(cn string, ips, dns []any, days int, isCA bool, key crypto.Signer, ca certificate) (certificate, error) {
	tmpl, err := p.template(cn, ips, dns, days, isCA)
	if err != nil {
		return certificate{}, err
	}
	parent, parentKey := tmpl, key
	if ca.Cert != "" || ca.Key != "" {
		block, _ := pem.Decode([]byte(ca.Cert))
		if block == nil {
			return certificate{}, errors.New("unable to decode certificate")
		}
		if parent, err = x509.ParseCertificate(block.Bytes); err != nil {
			return certificate{}, fmt.Errorf("error parsing certificate: %w", err)
		}
		if parentKey, err = parseKeyPEM(ca.Key); err != nil {
			return certificate{}, fmt.Errorf("error parsing private key: %w", err)
		}
	}
	der, err := x509.CreateCertificate(p.rng, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return certificate{}, fmt.Errorf("error creating certificate: %w", err)
	}
	k, err := keyPEM(key)
	if err != nil {
		return certificate{}, err
	}
	return certificate{Cert: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), Key: k}, nil
}

// template is sprig's base certificate template with the pinned clock and serial source.
func (p pki) template(cn string, ips, dns []any, days int, isCA bool) (*x509.Certificate, error) {
	t := &x509.Certificate{
		SerialNumber:          new(big.Int).SetUint64(p.rng.Uint64()),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             p.now,
		NotAfter:              p.now.Add(24 * time.Hour * time.Duration(days)),
		KeyUsage:              x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
	}
	if isCA {
		t.IsCA = true
		t.KeyUsage |= x509.KeyUsageCertSign
	}
	for _, ip := range ips {
		s, ok := ip.(string)
		parsed := net.ParseIP(s)
		if !ok || parsed == nil {
			return nil, fmt.Errorf("error parsing ip: %v", ip)
		}
		t.IPAddresses = append(t.IPAddresses, parsed)
	}
	for _, name := range dns {
		s, ok := name.(string)
		if !ok {
			return nil, fmt.Errorf("error processing alternate dns name: %v", name)
		}
		t.DNSNames = append(t.DNSNames, s)
	}
	return t, nil
}

// certOf reads the Cert and Key fields of a certificate value of any struct type (ours or sprig's).
func certOf(v any) certificate {
	rv := reflect.Indirect(reflect.ValueOf(v))
	if rv.Kind() != reflect.Struct {
		return certificate{}
	}
	field := func(name string) string {
		f := rv.FieldByName(name)
		if f.IsValid() && f.Kind() == reflect.String {
			return f.String()
		}
		return ""
	}
	return certificate{Cert: field("Cert"), Key: field("Key")}
}

// keyPEM encodes a private key as PKCS#8 PEM.
func keyPEM(key crypto.Signer) (string, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", fmt.Errorf("marshal private key: %w", err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), nil
}

// parseKeyPEM reads a PKCS#1, PKCS#8 or SEC 1 private key.
func parseKeyPEM(s string) (crypto.Signer, error) {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, errors.New("no PEM data found")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	if k, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("unsupported key type %T", k)
	}
	return signer, nil
}
