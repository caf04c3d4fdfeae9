package evidence

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// Signing algorithms.
const (
	// AlgEd25519 signs with an Ed25519 private key; anyone holding the public key verifies.
	AlgEd25519 = "ed25519"
	// AlgHMACSHA256 signs with a shared secret; only holders of the secret verify (for readers that need it).
	AlgHMACSHA256 = "hmac-sha256"
)

// Signer signs manifests.
type Signer struct {
	alg    string
	keyID  string
	priv   ed25519.PrivateKey
	secret []byte
}

// Algorithm returns the signer's algorithm; KeyID its key id.
func (s *Signer) Algorithm() string { return s.alg }

// KeyID returns the id written into manifests: the first 16 hex digits of sha256 of the public key (Ed25519) or of
// the secret (HMAC).
func (s *Signer) KeyID() string { return s.keyID }

// Sign returns the base64 signature of data followed by a newline (the content of manifest.json.sig).
func (s *Signer) Sign(data []byte) []byte {
	var sig []byte
	if s.alg == AlgEd25519 {
		sig = ed25519.Sign(s.priv, data)
	} else {
		m := hmac.New(sha256.New, s.secret)
		m.Write(data)
		sig = m.Sum(nil)
	}
	return []byte(base64.StdEncoding.EncodeToString(sig) + "\n")
}

// PublicKeyPEM returns the Ed25519 public key as PEM (PKIX), the content of `audit/keys/<key id>.pub`; nil for
// HMAC.
func (s *Signer) PublicKeyPEM() []byte {
	if s.alg != AlgEd25519 {
		return nil
	}
	der, _ := x509.MarshalPKIXPublicKey(s.priv.Public())
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func keyID(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// NewEd25519Signer reads an Ed25519 private key in PEM (PKCS #8, as `openssl genpkey -algorithm ed25519` writes)
// and returns its signer. Errors say what the file holds instead; key bytes are never part of an error.
func NewEd25519Signer(pemData []byte) (*Signer, error) {
	block, _ := pem.Decode(pemData)
	if block == nil {
		return nil, errors.New("signing key: not PEM; want an Ed25519 private key (openssl genpkey -algorithm ed25519)")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("signing key: PEM block %q is not a PKCS #8 private key", block.Type)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("signing key: %T, want an Ed25519 key", k)
	}
	return &Signer{alg: AlgEd25519, priv: priv, keyID: keyID(priv.Public().(ed25519.PublicKey))}, nil
}

// NewHMACSigner returns an HMAC-SHA256 signer of secret (surrounding white space trimmed, at least 32 bytes).
func NewHMACSigner(secret []byte) (*Signer, error) {
	s := []byte(strings.TrimSpace(string(secret)))
	if len(s) < 32 {
		return nil, fmt.Errorf("HMAC key: %d bytes, want at least 32", len(s))
	}
	return &Signer{alg: AlgHMACSHA256, secret: s, keyID: keyID(s)}, nil
}

// ParsePublicKey reads a PEM (PKIX) Ed25519 public key and returns it with its key id.
func ParsePublicKey(pemData []byte) (ed25519.PublicKey, string, error) {
	block, _ := pem.Decode(pemData)
	if block == nil {
		return nil, "", errors.New("public key: not PEM")
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, "", fmt.Errorf("public key: %w", err)
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, "", fmt.Errorf("public key: %T, want Ed25519", k)
	}
	return pub, keyID(pub), nil
}

// Keys are the verification keys a reader trusts, by key id.
type Keys struct {
	ed   map[string]ed25519.PublicKey
	hmac map[string][]byte
}

// AddPublicKey trusts an Ed25519 public key (PEM) and returns its id.
func (k *Keys) AddPublicKey(pemData []byte) (string, error) {
	pub, id, err := ParsePublicKey(pemData)
	if err != nil {
		return "", err
	}
	if k.ed == nil {
		k.ed = map[string]ed25519.PublicKey{}
	}
	k.ed[id] = pub
	return id, nil
}

// AddHMACKey trusts an HMAC secret and returns its id.
func (k *Keys) AddHMACKey(secret []byte) (string, error) {
	s, err := NewHMACSigner(secret)
	if err != nil {
		return "", err
	}
	if k.hmac == nil {
		k.hmac = map[string][]byte{}
	}
	k.hmac[s.keyID] = s.secret
	return s.keyID, nil
}

// Len returns the number of trusted keys.
func (k *Keys) Len() int { return len(k.ed) + len(k.hmac) }

// ErrUnknownKey is returned by Verify when no trusted key has the manifest's key id.
var ErrUnknownKey = errors.New("unknown key")

// ErrBadSignature is returned by Verify when the signature does not match.
var ErrBadSignature = errors.New("bad signature")

// Verify checks sig (manifest.json.sig content) over data with the trusted key keyID of algorithm alg.
func (k *Keys) Verify(alg, keyID string, data, sig []byte) error {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(sig)))
	if err != nil {
		return fmt.Errorf("%w: not base64", ErrBadSignature)
	}
	switch alg {
	case AlgEd25519:
		pub, ok := k.ed[keyID]
		if !ok {
			return fmt.Errorf("%w %s (ed25519)", ErrUnknownKey, keyID)
		}
		if !ed25519.Verify(pub, data, raw) {
			return fmt.Errorf("%w (ed25519 key %s)", ErrBadSignature, keyID)
		}
	case AlgHMACSHA256:
		secret, ok := k.hmac[keyID]
		if !ok {
			return fmt.Errorf("%w %s (hmac-sha256)", ErrUnknownKey, keyID)
		}
		m := hmac.New(sha256.New, secret)
		m.Write(data)
		if !hmac.Equal(m.Sum(nil), raw) {
			return fmt.Errorf("%w (hmac-sha256 key %s)", ErrBadSignature, keyID)
		}
	default:
		return fmt.Errorf("%w: algorithm %q", ErrBadSignature, alg)
	}
	return nil
}
