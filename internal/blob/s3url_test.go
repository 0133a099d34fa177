package blob_test

import (
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/blob"
)

func TestParseS3URL(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want blob.S3Config
		err  string
	}{
		{raw: "s3://bucket", want: blob.S3Config{Bucket: "bucket", Endpoint: blob.DefaultS3Endpoint, Secure: true}},
		{raw: "s3://bucket/a/b/?region=eu-west-3", want: blob.S3Config{Bucket: "bucket", Prefix: "a/b/", Endpoint: blob.DefaultS3Endpoint, Secure: true, Region: "eu-west-3"}},
		{raw: "s3://b/p?endpoint=minio.internal:9000", want: blob.S3Config{Bucket: "b", Prefix: "p/", Endpoint: "minio.internal:9000", Secure: true}},
		{raw: "s3://b?endpoint=http://127.0.0.1:7070/", want: blob.S3Config{Bucket: "b", Endpoint: "127.0.0.1:7070"}},
		{raw: "s3://b?endpoint=https://s3.example.com", want: blob.S3Config{Bucket: "b", Endpoint: "s3.example.com", Secure: true}},
		{raw: "/var/lib/blobs", err: "must be an s3:// URL"},
		{raw: "gs://bucket/x", err: "must be an s3:// URL"},
		{raw: "s3:///prefix", err: "names no bucket"},
		{raw: "s3://key:secret@bucket", err: "must not hold credentials"},
		{raw: "s3://b?endpoint=ftp://host", err: "endpoint"},
		{raw: "s3://b?endpoint=http://host/path", err: "endpoint"},
		{raw: "s3://b?endpoint=http://", err: "endpoint"},
		{raw: "s3://b?bucket=x", err: `unknown parameter "bucket"`},
		{raw: "s3://b\x7f", err: "not a URL"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := blob.ParseS3URL(tc.raw)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("= %+v, %v; want %+v", got, err, tc.want)
			}
			// String gives a URL that parses back to the same place.
			again, err := blob.ParseS3URL(got.String())
			if err != nil || again != got {
				t.Fatalf("%s parses to %+v, %v", got, again, err)
			}
		})
	}
}
