package support

import (
	"regexp"
	"strings"
)

// Redacted replaces every value the Redactor takes for a credential.
const Redacted = "REDACTED"

// Patterns of values that look like credentials wherever they appear (logs, annotations, ConfigMap data, rendered
// manifests). Sources: RFC 6750 (bearer tokens), RFC 7617 (basic credentials), RFC 7519 (JWT: three base64url
// parts, the first a JSON object, hence `eyJ`), RFC 3986 section 3.2.1 (user information in URLs), RFC 7468 (PEM
// private keys) and AWS's access key ID format (`AKIA` or `ASIA` and 16 upper-case letters or digits).
var (
	// keyValue is `<key><separator><value>` as YAML, JSON (also escaped inside a JSON string), logfmt, flags and
	// environment assignments write it: group 1 is the key, 2 the separator with its quotes, 3 the value.
	keyValue = regexp.MustCompile(`([A-Za-z0-9_.\-]*[A-Za-z0-9])((?:\\?")?[ \t]*[:=][ \t]*(?:\\?["'])?)([^\s"'\\,;&}\]{\[|>][^\s"'\\,;&}\]]*)`)
	// authScheme is an HTTP Authorization value.
	authScheme = regexp.MustCompile(`(?i)\b(bearer|basic)([ \t]+)[A-Za-z0-9._~+/=\-]{6,}`)
	jwt        = regexp.MustCompile(`eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*`)
	userInfo   = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.\-]*://)[^/\s:@"']+:[^/\s@"']+@`)
	pemKey     = regexp.MustCompile(`-----BEGIN ([A-Z ]*)PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----`)
	awsKeyID   = regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`)
)

// credentialWords are the parts of a key name that say its value is a credential.
var credentialWords = []string{"password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey",
	"privatekey", "credential", "authorization", "bearer", "sessionkey", "signingkey", "clientkey", "hmac"}

// referenceSuffixes end key names whose value names a credential instead of holding it (`secretName`,
// `credentials_secret_name`, `passwordKey` of a Secret reference, `tokenFile`): their values stay.
var referenceSuffixes = []string{"name", "ref", "namespace", "file", "path", "selector", "kind", "usernamekey",
	"passwordkey", "tokenkey", "secretkeyref", "mode", "enabled", "ttl", "expiration", "expirationseconds",
	"audience", "type", "rotation"}

// Redactor replaces values that look like credentials in text; it counts what it replaced. The zero value is ready.
type Redactor struct {
	// Count is the number of values replaced so far.
	Count int
}

// Text returns s with every credential-looking value replaced by Redacted: PEM private keys, bearer and basic
// Authorization values, JWTs, AWS access key IDs, the password of URLs with user information, and the value of
// every key whose name holds a credential word (password, secret, token, api key, access key, private key,
// credential, ...) unless the name says the value is a reference (secretName, passwordKey, tokenFile, ...).
func (r *Redactor) Text(s string) string {
	s = r.replace(pemKey, s, func(m []string) string {
		return "-----BEGIN " + m[1] + "PRIVATE KEY-----" + Redacted + "-----END " + m[1] + "PRIVATE KEY-----"
	})
	s = r.replace(userInfo, s, func(m []string) string { return m[1] + Redacted + "@" })
	s = r.replace(authScheme, s, func(m []string) string { return m[1] + m[2] + Redacted })
	s = r.replace(jwt, s, func([]string) string { return Redacted })
	s = r.replace(awsKeyID, s, func([]string) string { return Redacted })
	return r.replace(keyValue, s, func(m []string) string {
		// An Authorization scheme's credentials follow it and were replaced above.
		if !credentialKey(m[1]) || m[3] == Redacted || strings.EqualFold(m[3], "bearer") ||
			strings.EqualFold(m[3], "basic") {
			return m[0]
		}
		return m[1] + m[2] + Redacted
	})
}

// Object redacts a decoded JSON or YAML value in place and returns it: the string value of every key credentialKey
// accepts becomes Redacted (also a multi-line one, which Text alone cannot see whole), and every other string goes
// through Text. Maps are map[string]any and lists []any, as encoding/json and sigs.k8s.io/yaml decode them.
func (r *Redactor) Object(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, val := range v {
			if s, ok := val.(string); ok && s != "" && s != Redacted && credentialKey(k) {
				v[k] = Redacted
				r.Count++
				continue
			}
			v[k] = r.Object(val)
		}
		return v
	case []any:
		for i := range v {
			v[i] = r.Object(v[i])
		}
		return v
	case string:
		return r.Text(v)
	default:
		return v
	}
}

// replace runs re over s and replaces each match by f of its groups, counting the matches f changed.
func (r *Redactor) replace(re *regexp.Regexp, s string, f func([]string) string) string {
	return re.ReplaceAllStringFunc(s, func(match string) string {
		out := f(re.FindStringSubmatch(match))
		if out != match {
			r.Count++
		}
		return out
	})
}

// credentialKey reports whether the key name holds a credential: it contains a credential word and does not end
// with a reference suffix. Case, `-`, `_` and `.` are ignored (`S3_SECRET_ACCESS_KEY`, `secret-key`,
// `basic_auth.password`).
func credentialKey(key string) bool {
	k := strings.NewReplacer("-", "", "_", "", ".", "").Replace(strings.ToLower(key))
	if i := strings.LastIndex(strings.ToLower(key), "."); i >= 0 {
		// A dotted key (`basic_auth.password`, `auth.token_file`) is judged by its last part.
		k = strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(key[i+1:]))
	}
	for _, suffix := range referenceSuffixes {
		if strings.HasSuffix(k, suffix) {
			return false
		}
	}
	for _, w := range credentialWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}
