package testproc

import "testing"

// MinIO credentials of every test server (loopback only).
const (
	// MinIOAccessKey is the root user of the test MinIO.
	MinIOAccessKey = "kof-test-access"
	// MinIOSecretKey is the root password of the test MinIO.
	MinIOSecretKey = "kof-test-secret-key"
)

// VictoriaMetricsSpec runs VictoriaMetrics single-node with its data in the folder, accepting samples of any age
// (tests write fixed past hours) and exporting them at once (no search latency offset).
func VictoriaMetricsSpec() Spec {
	return Spec{
		Tool: "victoria-metrics",
		Args: func(addr, dir string) []string {
			return []string{
				"-httpListenAddr=" + addr, "-storageDataPath=" + dir + "/data", "-retentionPeriod=100y",
				"-search.latencyOffset=0s", "-search.disableCache", "-loggerLevel=WARN",
				"-memory.allowedPercent=20",
			}
		},
		Health: "/health",
	}
}

// VictoriaLogsSpec runs VictoriaLogs single-node with its data in the folder and a retention that keeps the fixed
// past hours tests write.
func VictoriaLogsSpec() Spec {
	return Spec{
		Tool: "victoria-logs",
		Args: func(addr, dir string) []string {
			return []string{
				"-httpListenAddr=" + addr, "-storageDataPath=" + dir + "/data", "-retentionPeriod=100y",
				"-futureRetention=100y", "-loggerLevel=WARN", "-memory.allowedPercent=20",
			}
		},
		Health: "/health",
	}
}

// MinIOSpec runs a single-drive MinIO with the folder as its drive and MinIOAccessKey/MinIOSecretKey as root; it is
// ready when it serves S3 and admin requests.
func MinIOSpec() Spec {
	return Spec{
		Tool: "minio",
		Args: func(addr, dir string) []string {
			return []string{"server", "--quiet", "--address", addr, dir + "/drive"}
		},
		Env: []string{
			"MINIO_ROOT_USER=" + MinIOAccessKey, "MINIO_ROOT_PASSWORD=" + MinIOSecretKey,
			"MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CI_CD=1",
		},
		// MinIO's cluster check answers 200 only once its object layer, bucket metadata and IAM are initialized;
		// its liveness check answers 200 before, when a bucket PUT gets 503 XMinioServerNotInitialized and a policy
		// just added can be lost to the IAM load that follows.
		Health: "/minio/health/cluster",
	}
}

// VictoriaMetrics starts VictoriaMetrics for t (see VictoriaMetricsSpec).
func VictoriaMetrics(t testing.TB) *Server { t.Helper(); return startServerT(t, VictoriaMetricsSpec()) }

// VictoriaLogs starts VictoriaLogs for t (see VictoriaLogsSpec).
func VictoriaLogs(t testing.TB) *Server { t.Helper(); return startServerT(t, VictoriaLogsSpec()) }

// MinIO starts MinIO for t (see MinIOSpec).
func MinIO(t testing.TB) *Server { t.Helper(); return startServerT(t, MinIOSpec()) }
