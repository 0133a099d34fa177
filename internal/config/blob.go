package config

import (
	"errors"
	"fmt"
	"os"

	"github.com/botplatform/botplatform/internal/blob"
)

// blobSettings is --blob-url: where file contents live. Empty keeps them
// under the data directory; an s3:// URL puts them in a bucket, with the
// credentials of the standard AWS variables.
func blobSettings(c *Config) []setting {
	return []setting{{flag: "blob-url", env: "BLOB_URL",
		usage: "where file contents are stored: empty for <data>/blobs, or s3://BUCKET/PREFIX?endpoint=https://host:port&region=R with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (docs/deploy.md)",
		set: func(s setting, v string) error {
			c.Blob = nil
			if v == "" {
				return nil
			}
			b, err := blob.ParseS3URL(v)
			if err != nil {
				return fmt.Errorf("%s: %v", s.flag, err)
			}
			if err := s3Credentials(&b); err != nil {
				return fmt.Errorf("%s: %v", s.flag, err)
			}
			c.Blob = &b
			return nil
		}},
		{flag: "blob-download", env: "BLOB_DOWNLOAD", def: "stream",
			usage: "how files' urls deliver content kept in a bucket (blob-url): stream (through this server) or redirect (a 307 to a presigned GET of the bucket, valid 5 minutes; clients must reach the bucket's endpoint) (docs/deploy.md)",
			set: func(s setting, v string) error {
				switch v {
				case "stream", "redirect":
					c.BlobDownload = v
					return nil
				}
				return fmt.Errorf("%s: must be stream or redirect", s.flag)
			}}}
}

// validateBlob checks the file storage settings against each other.
func (c *Config) validateBlob() error {
	if c.BlobDownload == "redirect" && c.Blob == nil {
		return errors.New("blob-download: redirect sends clients to the bucket of blob-url, and none is set (files in the data directory are always streamed)")
	}
	return nil
}

// S3Target reads an s3:// URL given to a command (backup --to, restore
// --from), with the credentials of the standard AWS variables.
func S3Target(raw string) (blob.S3Config, error) {
	b, err := blob.ParseS3URL(raw)
	if err == nil {
		err = s3Credentials(&b)
	}
	return b, err
}

// s3Credentials reads the standard AWS variables, each also from the file
// its _FILE variant names (for secrets mounted as files).
func s3Credentials(b *blob.S3Config) error {
	var errs []error
	for _, v := range []struct {
		name     string
		dst      *string
		required bool
	}{
		{"AWS_ACCESS_KEY_ID", &b.AccessKey, true},
		{"AWS_SECRET_ACCESS_KEY", &b.SecretKey, true},
		{"AWS_SESSION_TOKEN", &b.SessionToken, false},
	} {
		val, err := secretEnv(v.name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if val == "" && v.required {
			errs = append(errs, fmt.Errorf("%s (or %s_FILE) must be set", v.name, v.name))
		}
		*v.dst = val
	}
	return errors.Join(errs...)
}

// secretEnv is the variable name, or the content of the file name_FILE
// names; a file that cannot be read is an error, not an empty secret.
func secretEnv(name string) (string, error) {
	if v := os.Getenv(name); v != "" {
		return v, nil
	}
	if os.Getenv(name+"_FILE") == "" {
		return "", nil // as before: an empty name_FILE names no file
	}
	v, _, err := fileEnv(name)
	return v, err
}
