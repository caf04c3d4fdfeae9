package bucket

import (
	"strings"
	"testing"
)

func TestFromEnv(t *testing.T) {
	env := map[string]string{EnvBucket: "b", EnvRegion: "eu-west-1", EnvEndpoint: "http://minio:9000",
		EnvUsePathStyle: "true", EnvAccessKey: "a", EnvSecretKey: "s"}
	c, err := FromEnv(func(k string) string { return env[k] })
	want := Config{Bucket: "b", Region: "eu-west-1", Endpoint: "http://minio:9000", UsePathStyle: true,
		AccessKey: "a", SecretKey: "s"}
	if err != nil || c != want {
		t.Errorf("FromEnv = %+v, %v; want %+v", c, err, want)
	}
	env[EnvInsecureSkipVerify] = "maybe"
	if _, err := FromEnv(func(k string) string { return env[k] }); err == nil ||
		!strings.Contains(err.Error(), `S3_INSECURE_SKIP_VERIFY "maybe": want true or false`) {
		t.Errorf("bad boolean: error %v, want one naming the variable", err)
	}
}
