package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/botplatform/botplatform/internal/blob/s3/s3test"
	"github.com/minio/minio-go/v7"
)

// TestReadiness: /readyz answers 200 while the database and the file
// storage answer, and 503 naming the file storage when it does not: the
// data directory's objects gone, or the bucket.
func TestReadiness(t *testing.T) {
	t.Run("data directory", func(t *testing.T) {
		s := startBackend(t, "sqlite")
		ready(t, s)
		objects := filepath.Join(s.DataDir, "blobs", "objects")
		if err := os.Rename(objects, objects+".away"); err != nil {
			t.Fatal(err)
		}
		s.as(t, "", "").get("/readyz").fail(503, "ServiceUnavailable", "the file storage does not answer")
		if r := s.as(t, "", "").get("/healthz"); r.Status != 200 {
			t.Errorf("/healthz, the database answering: %d", r.Status)
		}
		if err := os.Rename(objects+".away", objects); err != nil {
			t.Fatal(err)
		}
		ready(t, s)
	})
	t.Run("bucket", func(t *testing.T) {
		gw := s3test.Start(t) // its credentials: TestMain's
		s := startServer(t, t.TempDir(), "", "--blob-url", gw.URL("ready/"))
		ready(t, s)
		ctx := context.Background()
		for _, key := range gw.Objects(t, "") {
			if err := gw.Client.RemoveObject(ctx, gw.Bucket, key, minio.RemoveObjectOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := gw.Client.RemoveBucket(ctx, gw.Bucket); err != nil {
			t.Fatal(err)
		}
		s.as(t, "", "").get("/readyz").fail(503, "ServiceUnavailable", "the file storage does not answer")
	})
}

func ready(t *testing.T, s *testServer) {
	t.Helper()
	if r := s.as(t, "", "").get("/readyz"); r.Status != 200 || string(r.Body) == "" {
		t.Fatalf("/readyz: %d %s, want 200", r.Status, r.Body)
	}
}
