package auditlog

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/evidence"
	"kof.dev/kof/exporters/window"
)

// Env names of the exporter (set by charts/audit-logs-exporter).
const (
	EnvLogsURL        = "AUDIT_LOGS_URL"
	EnvTenantField    = "TENANT_FIELD"
	EnvS3Bucket       = bucket.EnvBucket
	EnvS3Region       = bucket.EnvRegion
	EnvS3Endpoint     = bucket.EnvEndpoint
	EnvS3UsePathStyle = bucket.EnvUsePathStyle
	EnvS3InsecureSkip = bucket.EnvInsecureSkipVerify
	EnvS3AccessKey    = bucket.EnvAccessKey
	EnvS3SecretKey    = bucket.EnvSecretKey
	EnvWindowDelay    = window.EnvDelay
	EnvCatchUpHours   = window.EnvCatchUpHours
	EnvSigningAlg     = "SIGNING_ALGORITHM"
	EnvSigningKeyFile = "SIGNING_KEY_FILE"
	EnvComplianceMode = "COMPLIANCE_MODE"
)

// Defaults of FromEnv.
const (
	DefaultTenantField  = "tenant"
	DefaultWindowDelay  = 10 * time.Minute
	DefaultCatchUpHours = 24
)

// Config is the exporter's configuration, read once at start.
type Config struct {
	// LogsURL is the LogsQL API root of the audit VictoriaLogs cluster (the `vlas` read endpoint of
	// docs/contract.md).
	LogsURL string
	// TenantField holds the tenant of an event (added by the VMUser routes: `extra_fields=tenant=<id>`).
	TenantField string
	// S3 is the target bucket.
	S3 bucket.Config
	// Plan says which windows a run exports.
	Plan window.Plan
	// Signer signs the manifests.
	Signer *evidence.Signer
	// ComplianceMode refuses to run when the bucket has no object lock.
	ComplianceMode bool
}

// FromEnv reads the configuration through getenv and the signing key file through readFile (os.Getenv and
// os.ReadFile in main). It returns every problem at once, naming the variable and the fix; key bytes never appear
// in an error.
func FromEnv(getenv func(string) string, readFile func(string) ([]byte, error)) (Config, error) {
	c := Config{LogsURL: getenv(EnvLogsURL), TenantField: DefaultTenantField}
	s3, err := bucket.FromEnv(getenv)
	plan, perr := window.PlanFromEnv(getenv, window.Plan{Delay: DefaultWindowDelay, CatchUp: DefaultCatchUpHours})
	c.S3, c.Plan = s3, plan
	errs := []error{err, perr, bucket.ParseBool(getenv, EnvComplianceMode, &c.ComplianceMode)}
	if v := getenv(EnvTenantField); v != "" {
		c.TenantField = v
	}
	if u, err := url.Parse(c.LogsURL); c.LogsURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("%s %q: want the http(s) URL of the audit VictoriaLogs read API (vlselect of the audit cluster)", EnvLogsURL, c.LogsURL))
	}
	signer, err := loadSigner(getenv(EnvSigningAlg), getenv(EnvSigningKeyFile), readFile)
	if err != nil {
		errs = append(errs, err)
	}
	c.Signer = signer
	errs = append(errs, c.S3.Validate(), c.Plan.Validate())
	return c, errors.Join(errs...)
}

// loadSigner reads the signing key file of algorithm alg (default ed25519).
func loadSigner(alg, file string, readFile func(string) ([]byte, error)) (*evidence.Signer, error) {
	if alg == "" {
		alg = evidence.AlgEd25519
	}
	if alg != evidence.AlgEd25519 && alg != evidence.AlgHMACSHA256 {
		return nil, fmt.Errorf("%s %q: want %s or %s", EnvSigningAlg, alg, evidence.AlgEd25519, evidence.AlgHMACSHA256)
	}
	if file == "" {
		return nil, fmt.Errorf("%s: required; mount the signing key Secret and point this at its file", EnvSigningKeyFile)
	}
	if readFile == nil {
		readFile = os.ReadFile
	}
	data, err := readFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", EnvSigningKeyFile, file, err)
	}
	var s *evidence.Signer
	if alg == evidence.AlgEd25519 {
		s, err = evidence.NewEd25519Signer(data)
	} else {
		s, err = evidence.NewHMACSigner(data)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", EnvSigningKeyFile, file, err)
	}
	return s, nil
}
