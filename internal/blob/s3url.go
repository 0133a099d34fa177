package blob

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// S3Config locates an S3-compatible bucket (and a prefix in it) that holds
// a Store's blobs. It is parsed here, apart from the S3 Store itself, so
// that configuration can check it without the S3 client.
type S3Config struct {
	Bucket   string
	Prefix   string // "" or ending with "/"
	Endpoint string // host[:port]
	Secure   bool   // https (the default) rather than http
	Region   string // "" lets the client find it
	// Credentials; they never appear in a URL.
	AccessKey, SecretKey, SessionToken string
	// PartSize is the size of the parts of a multipart upload, and so the
	// memory one Put holds at most; 0: the S3 Store's default.
	PartSize int64
}

// DefaultS3Endpoint is the endpoint of an s3:// URL that names none.
const DefaultS3Endpoint = "s3.amazonaws.com"

// ParseS3URL reads s3://BUCKET[/PREFIX][?endpoint=URL&region=R]. endpoint
// is host[:port] (https) or an http:// or https:// URL without a path.
func ParseS3URL(raw string) (S3Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return S3Config{}, fmt.Errorf("not a URL: %v", err)
	}
	if u.Scheme != "s3" {
		return S3Config{}, errors.New(`must be an s3:// URL, such as s3://BUCKET/PREFIX?endpoint=https://host:port&region=R`)
	}
	if u.User != nil {
		return S3Config{}, errors.New("must not hold credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or their _FILE variants)")
	}
	c := S3Config{Bucket: u.Host, Endpoint: DefaultS3Endpoint, Secure: true}
	if c.Bucket == "" {
		return S3Config{}, errors.New("names no bucket: s3://BUCKET/PREFIX")
	}
	if c.Prefix = strings.Trim(u.Path, "/"); c.Prefix != "" {
		c.Prefix += "/"
	}
	q := u.Query()
	for k := range q {
		if k != "endpoint" && k != "region" {
			return S3Config{}, fmt.Errorf("unknown parameter %q (endpoint and region are known)", k)
		}
	}
	c.Region = q.Get("region")
	if ep := q.Get("endpoint"); ep != "" {
		if !strings.Contains(ep, "://") {
			ep = "https://" + ep
		}
		e, err := url.Parse(ep)
		if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" || strings.Trim(e.Path, "/") != "" || e.RawQuery != "" {
			return S3Config{}, fmt.Errorf("endpoint %q: must be host:port or an http(s)://host:port URL without a path", q.Get("endpoint"))
		}
		c.Endpoint, c.Secure = e.Host, e.Scheme == "https"
	}
	return c, nil
}

// String is the location as an s3:// URL, without credentials.
func (c S3Config) String() string {
	scheme := "https"
	if !c.Secure {
		scheme = "http"
	}
	q := url.Values{"endpoint": {scheme + "://" + c.Endpoint}}
	if c.Region != "" {
		q.Set("region", c.Region)
	}
	return "s3://" + c.Bucket + "/" + c.Prefix + "?" + q.Encode()
}
