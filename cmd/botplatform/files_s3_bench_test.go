package main

import (
	"context"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/botplatform/botplatform/internal/blob/s3/s3test"
)

// BenchmarkObjectStorageTransfer uploads then downloads one file through
// the server on --blob-url (Versity's gateway on this machine), and in the
// same run the same transfer straight to the gateway with minio-go,
// reporting MB/s of each and the server's share of the direct speed; then
// the same download from a second server with --blob-download redirect
// (the client follows the 307 to the gateway). The file is 64 MiB;
// BOTPLATFORM_BENCH_MIB sets another size:
//
//	BOTPLATFORM_BENCH_MIB=256 go test -run '^$' -bench ObjectStorageTransfer -benchtime 1x -count 5 ./cmd/botplatform/
func BenchmarkObjectStorageTransfer(b *testing.B) {
	size := int64(64 << 20)
	if v := os.Getenv("BOTPLATFORM_BENCH_MIB"); v != "" {
		mib, err := strconv.Atoi(v)
		if err != nil || mib < 1 {
			b.Fatalf("BOTPLATFORM_BENCH_MIB=%q: want a whole number of MiB", v)
		}
		size = int64(mib) << 20
	}
	gw := s3test.Start(b) // its credentials: TestMain's
	s := startBenchServer(b, "--blob-url", gw.URL("server/"))
	redirect := startBenchServer(b, "--blob-url", gw.URL("redirect/"), "--blob-download", "redirect")
	ctx := context.Background()
	for b.Loop() {
		// Straight to the gateway: the same client library the server uses.
		t0 := time.Now()
		if _, err := gw.Client.PutObject(ctx, gw.Bucket, "direct/big.bin", &pattern{n: size}, size, minio.PutObjectOptions{}); err != nil {
			b.Fatal(err)
		}
		directUp := time.Since(t0)
		t0 = time.Now()
		obj, err := gw.Client.GetObject(ctx, gw.Bucket, "direct/big.bin", minio.GetObjectOptions{})
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, obj, make([]byte, 1<<20))
		obj.Close()
		directDown := time.Since(t0)
		if err != nil || n != size {
			b.Fatalf("direct download: %d bytes, %v", n, err)
		}

		// Through the server: uploadUrl, then the file's url.
		got, up, down := s.transfer(b, "big.bin", size)
		if got.File.Size == nil || *got.File.Size != size {
			b.Fatalf("the file's size is %v, want %d", got.File.Size, size)
		}
		_, _, redirected := redirect.transfer(b, "big.bin", size)
		mbps := func(d time.Duration) float64 { return float64(size) / (1 << 20) / d.Seconds() }
		b.ReportMetric(mbps(up), "upload-MB/s")
		b.ReportMetric(mbps(directUp), "direct-upload-MB/s")
		b.ReportMetric(100*directUp.Seconds()/up.Seconds(), "upload-%-of-direct")
		b.ReportMetric(mbps(down), "download-MB/s")
		b.ReportMetric(mbps(directDown), "direct-download-MB/s")
		b.ReportMetric(100*directDown.Seconds()/down.Seconds(), "download-%-of-direct")
		b.ReportMetric(mbps(redirected), "redirect-download-MB/s")
		b.ReportMetric(100*directDown.Seconds()/redirected.Seconds(), "redirect-download-%-of-direct")
	}
}
