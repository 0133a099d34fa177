// Package s3test runs an S3-compatible server (Versity's gateway) on 127.0.0.1 for tests.
package s3test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/botplatform/botplatform/internal/blob"
	"github.com/botplatform/botplatform/internal/syncbuf"
)

// Module is the gateway's Go package and the version the tests use.
const Module = "github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// EnvBinary names the variable that points to a versitygw binary; without
// it, Binary looks in (or builds into) CacheDir.
const EnvBinary = "BOTPLATFORM_VERSITYGW"

// Credentials of every gateway these tests start.
const (
	AccessKey = "botplatform-test"
	SecretKey = "botplatform-test-secret"
)

// Gateway is a running S3-compatible server with one bucket, Bucket.
type Gateway struct {
	Endpoint string // 127.0.0.1:PORT, plain HTTP
	Bucket   string
	Client   *minio.Client
	dir      string // the posix backend's root: DIR/BUCKET/KEY is an object
}

// CacheDir is where Binary keeps the gateway it builds: outside any
// checkout, so that every worktree and CI run shares one build.
func CacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "botplatform", "bin"), nil
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Binary returns the gateway's executable: $BOTPLATFORM_VERSITYGW, else
// the one in CacheDir, built there with go install when missing (once, a
// few minutes). The test is skipped only when it can be neither found
// nor built.
func Binary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() { binPath, binErr = findOrBuild() })
	if binErr != nil {
		if os.Getenv(EnvBinary) != "" {
			t.Fatal(binErr)
		}
		t.Skipf("no S3-compatible gateway for this test: %v", binErr)
	}
	return binPath
}

func findOrBuild() (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvBinary, p, err)
		}
		return p, nil
	}
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "versitygw")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("versitygw is not in %s and the go command to build it is missing", dir)
	}
	// Built into a directory of its own and renamed into place, so that
	// test packages building it at once never see half a binary.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command(goTool, "install", Module)
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s: %v\n%s", Module, err, out)
	}
	if err := os.Rename(filepath.Join(tmp, "versitygw"), p); err != nil {
		return "", err
	}
	return p, nil
}

// Start runs a gateway on a free port of 127.0.0.1, over a temporary
// directory, with an empty bucket; it is stopped when the test ends.
func Start(t testing.TB) *Gateway {
	t.Helper()
	bin := Binary(t)
	var err error
	for range 3 { // another process may take the free port first
		var g *Gateway
		if g, err = start(t, bin); err == nil {
			return g
		}
	}
	t.Fatal(err)
	return nil
}

func start(t testing.TB, bin string) (*Gateway, error) {
	root := t.TempDir()
	const bucket = "botplatform"
	// A directory under the root is a bucket of the posix backend.
	if err := os.Mkdir(filepath.Join(root, bucket), 0o755); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	out := &syncbuf.Buffer{}
	cmd := exec.Command(bin, "--access", AccessKey, "--secret", SecretKey, "--port", addr, "--quiet", "posix", root)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}
	client, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(AccessKey, SecretKey, "")})
	if err != nil {
		stop()
		return nil, err
	}
	// Ready once it answers for the bucket.
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ok, err := client.BucketExists(ctx, bucket)
		cancel()
		if err == nil && ok {
			break
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("versitygw on %s exited: %s", addr, out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("versitygw on %s not ready after a minute (%v): %s", addr, err, out)
		}
	}
	t.Cleanup(stop)
	return &Gateway{Endpoint: addr, Bucket: bucket, Client: client, dir: root}, nil
}

// Config is the configuration of a Store under prefix in the bucket.
func (g *Gateway) Config(prefix string) blob.S3Config {
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return blob.S3Config{Bucket: g.Bucket, Prefix: prefix, Endpoint: g.Endpoint, AccessKey: AccessKey, SecretKey: SecretKey}
}

// URL is the --blob-url of a Store under prefix in the bucket.
func (g *Gateway) URL(prefix string) string {
	return "s3://" + g.Bucket + "/" + prefix + "?endpoint=http://" + g.Endpoint
}

// Objects lists the objects under prefix, sorted.
func (g *Gateway) Objects(t testing.TB, prefix string) []string {
	t.Helper()
	var keys []string
	for o := range g.Client.ListObjects(context.Background(), g.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("listing %s: %v", prefix, o.Err)
		}
		keys = append(keys, o.Key)
	}
	sort.Strings(keys)
	return keys
}

// Uploads lists the objects under prefix that have a multipart upload in
// progress, sorted.
func (g *Gateway) Uploads(t testing.TB, prefix string) []string {
	t.Helper()
	var keys []string
	for u := range g.Client.ListIncompleteUploads(context.Background(), g.Bucket, prefix, true) {
		if u.Err != nil {
			t.Fatalf("listing uploads under %s: %v", prefix, u.Err)
		}
		keys = append(keys, u.Key)
	}
	sort.Strings(keys)
	return keys
}

// Age makes the object key look modified d ago (the posix backend reports
// the file's modification time), for tests of what happens to old objects.
func (g *Gateway) Age(t testing.TB, key string, d time.Duration) {
	t.Helper()
	when := time.Now().Add(-d)
	if err := os.Chtimes(filepath.Join(g.dir, g.Bucket, filepath.FromSlash(key)), when, when); err != nil {
		t.Fatal(err)
	}
}

// Put stores content under key, as another program would.
func (g *Gateway) Put(t testing.TB, key string, content []byte) {
	t.Helper()
	if _, err := g.Client.PutObject(context.Background(), g.Bucket, key, bytes.NewReader(content), int64(len(content)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
}
