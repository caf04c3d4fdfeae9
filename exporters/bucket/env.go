package bucket

import (
	"errors"
	"fmt"
	"strconv"
)

// Env names of the bucket settings, the same for both exporters (charts/cold-storage-exporter,
// charts/audit-logs-exporter).
const (
	EnvBucket             = "S3_BUCKET"
	EnvRegion             = "S3_REGION"
	EnvEndpoint           = "S3_ENDPOINT"
	EnvUsePathStyle       = "S3_USE_PATH_STYLE"
	EnvInsecureSkipVerify = "S3_INSECURE_SKIP_VERIFY"
	EnvAccessKey          = "S3_ACCESS_KEY"
	EnvSecretKey          = "S3_SECRET_KEY"
)

// FromEnv reads the bucket settings through getenv (os.Getenv in the exporters' mains). It returns every malformed
// value at once, naming the variable; Validate checks the settings themselves.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		Bucket: getenv(EnvBucket), Region: getenv(EnvRegion), Endpoint: getenv(EnvEndpoint),
		AccessKey: getenv(EnvAccessKey), SecretKey: getenv(EnvSecretKey),
	}
	return c, errors.Join(ParseBool(getenv, EnvUsePathStyle, &c.UsePathStyle),
		ParseBool(getenv, EnvInsecureSkipVerify, &c.InsecureSkipVerify))
}

// ParseBool sets dst from variable name when it is set; a value strconv.ParseBool rejects is an error naming the
// variable, and leaves dst alone.
func ParseBool(getenv func(string) string, name string, dst *bool) error {
	v := getenv(name)
	if v == "" {
		return nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%s %q: want true or false", name, v)
	}
	*dst = b
	return nil
}
