package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"maps"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/ratelimit"
)

func TestAIFlags(t *testing.T) {
	for _, k := range []string{"AI_URL", "AI_MODEL", "AI_KEY", "AI_PRICES", "AI_MODEL_INEXPENSIVE", "AI_MODEL_BALANCED", "AI_MODEL_ACCURATE", "AI_TIMEOUT"} {
		t.Setenv("BOTPLATFORM_"+k, "")
		os.Unsetenv("BOTPLATFORM_" + k)
	}
	prices := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(prices, []byte(`{"small": {"input": 0.1, "output": 0.4}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args    []string
		wantErr string
		check   func(Config) bool
	}{
		{nil, "", func(c Config) bool { return c.AIURL == "" && c.AIModels == nil }},
		{[]string{"--ai-url", "http://127.0.0.1:1/v1"}, "ai-model: required", nil},
		{[]string{"--ai-url", "ftp://x", "--ai-model", "m"}, "ai-url: must be an absolute http(s) URL", nil},
		{[]string{"--ai-url", "http://127.0.0.1:1/v1", "--ai-model", "m", "--ai-model-accurate", "big"}, "", func(c Config) bool {
			return c.AIModels["inexpensive"] == "m" && c.AIModels["balanced"] == "m" && c.AIModels["accurate"] == "big"
		}},
		{[]string{"--ai-url", "http://127.0.0.1:1/v1", "--ai-model-inexpensive", "a", "--ai-model-balanced", "b", "--ai-model-accurate", "c"}, "", func(c Config) bool {
			return c.AIModels["balanced"] == "b"
		}},
		{[]string{"--ai-prices", "@" + prices}, "", func(c Config) bool { return c.AIPrices["small"].Output == 0.4 && c.AITimeout == 2*time.Minute }},
		{[]string{"--ai-timeout", "10m"}, "", func(c Config) bool { return c.AITimeout == 10*time.Minute }},
		{[]string{"--ai-timeout", "10ms"}, "ai-timeout: must be a duration of at least 1s", nil},
		{[]string{"--ai-prices", `{"m": {"input": -1}}`}, "must not be negative", nil},
		{[]string{"--ai-prices", `not json`}, "ai-prices: must be JSON", nil},
		{[]string{"--ai-url", "http://127.0.0.1:1/v1", "--ai-model", "m", "--ai-model-accurate", "big@gpu", "--ai-servers", "gpu=http://10.0.0.2:8000/v1, cpu-2=https://cpu.example/v1",
			"--ai-model-map", `{"openai:gpt-4o": "big@gpu", "gpt-4o-mini": "m"}`}, "", func(c Config) bool {
			return c.AIServers["gpu"].URL == "http://10.0.0.2:8000/v1" && c.AIServers["gpu"].Key == "gpu-secret" && c.AIServers["cpu-2"].URL == "https://cpu.example/v1" &&
				c.AIModelMap["openai:gpt-4o"] == "big@gpu" && c.AIModels["accurate"] == "big@gpu"
		}},
		{[]string{"--ai-url", "http://127.0.0.1:1/v1", "--ai-model", "m@gpu"}, `ai-model-inexpensive: m@gpu: no model server "gpu" in --ai-servers`, nil},
		{[]string{"--ai-url", "http://127.0.0.1:1/v1", "--ai-model", "m", "--ai-model-map", `{"x": "big@tpu"}`, "--ai-servers", "gpu=http://10.0.0.2/v1"}, `ai-model-map: x: big@tpu: no model server "tpu"`, nil},
		{[]string{"--ai-url", "http://127.0.0.1:1/v1", "--ai-model", "m", "--ai-model-map", `{"x": ""}`}, "ai-model-map: x: a model name must not be empty", nil},
		{[]string{"--ai-url", "http://127.0.0.1:1/v1", "--ai-model", "m", "--ai-servers", "GPU=http://x/v1"}, `ai-servers: "GPU=http://x/v1": want name=URL`, nil},
		{[]string{"--ai-url", "http://127.0.0.1:1/v1", "--ai-model", "m", "--ai-servers", "gpu=ftp://x"}, "ai-servers: gpu: must be an absolute http(s) URL", nil},
		{[]string{"--ai-url", "http://127.0.0.1:1/v1", "--ai-model", "m", "--ai-servers", "gpu=http://a/v1,gpu=http://b/v1"}, "ai-servers: gpu: named twice", nil},
		{[]string{"--ai-model-map", `{"x": "m"}`}, "ai-servers, ai-model-map: need a model server (--ai-url)", nil},
		{[]string{"--ai-url", "http://127.0.0.1:1/v1", "--ai-model", "m", "--ai-model-map", `[1]`}, "ai-model-map: must be JSON", nil},
	}
	t.Setenv("BOTPLATFORM_AI_KEY_GPU", "gpu-secret")
	for _, c := range cases {
		got, err := Parse("serve", c.args, io.Discard)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%v: error %v, want %q", c.args, err, c.wantErr)
			}
			continue
		}
		if err != nil || !c.check(got) {
			t.Errorf("%v: %v %+v", c.args, err, got)
		}
	}
}

func TestAdoptDataFlag(t *testing.T) {
	for _, tc := range []struct {
		env     string
		args    []string
		want    bool
		wantErr string
	}{
		{"", nil, false, ""},
		{"", []string{"--adopt-data"}, true, ""},
		{"true", nil, true, ""},
		{"true", []string{"--adopt-data=false"}, false, ""},
		{"maybe", nil, false, "adopt-data: must be true or false"},
		{"", []string{"--adopt-data=maybe"}, false, "adopt-data"},
	} {
		t.Setenv("BOTPLATFORM_ADOPT_DATA", tc.env)
		c, err := Parse("serve", tc.args, io.Discard)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("env %q args %q: error %v, want %q", tc.env, tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || c.AdoptData != tc.want {
			t.Errorf("env %q args %q: AdoptData %v %v, want %v", tc.env, tc.args, c.AdoptData, err, tc.want)
		}
	}
}

func TestDebugAddr(t *testing.T) {
	t.Setenv("BOTPLATFORM_DEBUG_ADDR", "")
	for _, c := range []struct {
		addr string
		ok   bool
	}{{"", true}, {"127.0.0.1:0", true}, {"localhost:6060", true}, {"[::1]:6060", true},
		{"0.0.0.0:6060", false}, {":6060", false}, {"192.168.1.2:6060", false}, {"example.com:6060", false}, {"127.0.0.1", false}} {
		_, err := Parse("serve", []string{"--debug-addr", c.addr}, io.Discard)
		if (err == nil) != c.ok {
			t.Errorf("--debug-addr %q: error %v, want ok=%v", c.addr, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "debug-addr: must be a loopback address") {
			t.Errorf("--debug-addr %q: error %v does not name the flag", c.addr, err)
		}
	}
}

// Each setting's flag, variable and default appear together in
// docs/configuration.md, and Defaults holds the documented defaults.
func TestSettingsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	var c Config
	p := pending{aiTypes: map[string]string{}}
	for _, s := range settings(&c, &p) {
		if strings.HasPrefix(s.flag, "ai-model-") {
			continue // one row for the three model types
		}
		row := ""
		for _, line := range strings.Split(string(doc), "\n") {
			if strings.Contains(line, "| `BOTPLATFORM_"+s.env+"`") {
				row = line
			}
		}
		if row == "" {
			t.Errorf("BOTPLATFORM_%s: no row in docs/configuration.md", s.env)
			continue
		}
		if s.flag != "" && !strings.HasPrefix(row, "| `--"+s.flag+"` |") {
			t.Errorf("BOTPLATFORM_%s: the row does not name --%s: %s", s.env, s.flag, row)
		}
		if s.def != "" && !strings.Contains(row, "| `"+s.def+"` |") {
			t.Errorf("--%s: the row does not give the default %s: %s", s.flag, s.def, row)
		}
	}
	d := Defaults()
	if d.BotWorkers != 64 || d.BotTimeout != 10*time.Second || d.BotTimeoutMax != time.Minute || d.BotMemory != 256 ||
		d.UploadURLTTL != time.Hour || d.SSEPingInterval != 4*time.Second || d.AuthCacheTTL != 5*time.Second || d.Addr != "127.0.0.1:8080" {
		t.Errorf("Defaults() = %+v", d)
	}
}

func TestRateLimitFlags(t *testing.T) {
	for _, k := range []string{"TOKEN", "BOT", "CHAT_USER", "ADDRESS"} {
		t.Setenv("BOTPLATFORM_RATE_LIMIT_"+k, "")
		os.Unsetenv("BOTPLATFORM_RATE_LIMIT_" + k)
	}
	for _, tc := range []struct {
		env     string // BOTPLATFORM_RATE_LIMIT_CHAT_USER
		args    []string
		want    ratelimit.Rates
		wantErr string
	}{
		{"", nil, nil, ""},
		{"", []string{"--rate-limit-token", "100/s", "--rate-limit-bot", "6000/m,burst=200"},
			ratelimit.Rates{ratelimit.Token: {Events: 100, Per: time.Second, Burst: 100}, ratelimit.Bot: {Events: 6000, Per: time.Minute, Burst: 200}}, ""},
		{"30/m", []string{"--rate-limit-address=5/10s"},
			ratelimit.Rates{ratelimit.ChatUser: {Events: 30, Per: time.Minute, Burst: 30}, ratelimit.Address: {Events: 5, Per: 10 * time.Second, Burst: 5}}, ""},
		{"30/m", []string{"--rate-limit-chat-user", "off"}, nil, ""},
		{"", []string{"--rate-limit-token", "100"}, nil, `rate-limit-token: "100": no /PERIOD; want N/PERIOD`},
		{"lots", nil, nil, "rate-limit-chat-user:"},
	} {
		t.Setenv("BOTPLATFORM_RATE_LIMIT_CHAT_USER", tc.env)
		c, err := Parse("serve", tc.args, io.Discard)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("env %q args %q: error %v, want %q", tc.env, tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !maps.Equal(c.RateLimits, tc.want) {
			t.Errorf("env %q args %q: RateLimits %v %v, want %v", tc.env, tc.args, c.RateLimits, err, tc.want)
		}
	}
}

func TestAuditRetention(t *testing.T) {
	for _, c := range []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"90d", 90 * 24 * time.Hour, true}, {"1d", 24 * time.Hour, true}, {"36h", 36 * time.Hour, true}, {"0", 0, true}, {"0d", 0, true},
		{"30m", 0, false}, {"-1d", 0, false}, {"abc", 0, false}, {"d", 0, false}, {"1.5d", 0, false},
	} {
		cfg, err := Parse("serve", []string{"--audit-retention", c.v}, io.Discard)
		if (err == nil) != c.ok {
			t.Errorf("--audit-retention %q: error %v, want ok=%v", c.v, err, c.ok)
			continue
		}
		if err != nil && !strings.Contains(err.Error(), "audit-retention:") {
			t.Errorf("--audit-retention %q: error %v does not name the flag", c.v, err)
		}
		if c.ok && cfg.AuditRetention != c.want {
			t.Errorf("--audit-retention %q = %v, want %v", c.v, cfg.AuditRetention, c.want)
		}
	}
	if d := Defaults().AuditRetention; d != 90*24*time.Hour {
		t.Errorf("default audit retention %v, want 90 days", d)
	}
}

func TestBlobURL(t *testing.T) {
	for _, k := range []string{"BOTPLATFORM_BLOB_URL", "BOTPLATFORM_BACKUP_CRON", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
		"AWS_ACCESS_KEY_ID_FILE", "AWS_SECRET_ACCESS_KEY_FILE", "AWS_SESSION_TOKEN_FILE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const url = "s3://files/prod?endpoint=http://127.0.0.1:9000&region=eu-west-3"
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr string
		check   func(Config) bool
	}{
		{"default: the data directory", nil, nil, "", func(c Config) bool { return c.Blob == nil && c.BlobDownload == "stream" }},
		{"downloads redirected", map[string]string{"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "sk", "BOTPLATFORM_BLOB_DOWNLOAD": "redirect"},
			[]string{"--blob-url", url}, "", func(c Config) bool { return c.Blob != nil && c.BlobDownload == "redirect" }},
		{"redirect without a bucket", nil, []string{"--blob-download", "redirect"}, "blob-download: redirect sends clients to the bucket of blob-url, and none is set", nil},
		{"unknown download mode", nil, []string{"--blob-download", "proxy"}, "blob-download: must be stream or redirect", nil},
		{"keys from variables", map[string]string{"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "sk", "AWS_SESSION_TOKEN": "tok"},
			[]string{"--blob-url", url}, "", func(c Config) bool {
				b := c.Blob
				return b != nil && b.Bucket == "files" && b.Prefix == "prod/" && b.Endpoint == "127.0.0.1:9000" && !b.Secure &&
					b.Region == "eu-west-3" && b.AccessKey == "id" && b.SecretKey == "sk" && b.SessionToken == "tok"
			}},
		{"secret from a file, URL from BOTPLATFORM_BLOB_URL", map[string]string{"BOTPLATFORM_BLOB_URL": url, "AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY_FILE": secret},
			nil, "", func(c Config) bool { return c.Blob != nil && c.Blob.SecretKey == "from-file" }},
		{"unreadable secret file", map[string]string{"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY_FILE": secret + ".missing"},
			[]string{"--blob-url", url}, "blob-url: AWS_SECRET_ACCESS_KEY_FILE", nil},
		{"no credentials", nil, []string{"--blob-url", url}, "blob-url: AWS_ACCESS_KEY_ID (or AWS_ACCESS_KEY_ID_FILE) must be set", nil},
		{"bad scheme", nil, []string{"--blob-url", "file:///srv/blobs"}, "blob-url: must be an s3:// URL", nil},
		{"no bucket", nil, []string{"--blob-url", "s3:///x"}, "blob-url: names no bucket", nil},
		{"scheduled backups", map[string]string{"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "sk"},
			[]string{"--blob-url", url, "--backup-cron", "@daily"}, "backup-cron: scheduled backups copy file contents from the data directory", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c, err := Parse("serve", tc.args, io.Discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !tc.check(c) {
				t.Fatalf("%v %+v", err, c.Blob)
			}
		})
	}
}

func TestDatabaseConnections(t *testing.T) {
	t.Setenv("BOTPLATFORM_DATABASE_CONNECTIONS", "")
	os.Unsetenv("BOTPLATFORM_DATABASE_CONNECTIONS")
	for _, tc := range []struct {
		env     string
		args    []string
		want    int
		wantErr string
	}{
		{"", nil, 20, ""},
		{"", []string{"--database-connections", "6"}, 6, ""},
		{"8", nil, 8, ""},
		{"8", []string{"--database-connections=5"}, 5, ""},
		{"", []string{"--database-connections", "3"}, 0, "database-connections: must be a whole number of at least 4"},
		{"many", nil, 0, "database-connections: must be a whole number of at least 4"},
	} {
		if tc.env == "" {
			os.Unsetenv("BOTPLATFORM_DATABASE_CONNECTIONS")
		} else {
			os.Setenv("BOTPLATFORM_DATABASE_CONNECTIONS", tc.env)
		}
		c, err := Parse("serve", tc.args, io.Discard)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("env %q args %q: error %v, want %q", tc.env, tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || c.DatabaseConns != tc.want {
			t.Errorf("env %q args %q: DatabaseConns %d %v, want %d", tc.env, tc.args, c.DatabaseConns, err, tc.want)
		}
	}
}

// listFlagCase is a value of a list setting given by its variable (env; "unset": none) and arguments, and
// what the setting reads (want, printed) or the error it gives.
type listFlagCase struct {
	env     string
	args    []string
	want    string
	wantErr string
}

func testListFlag(t *testing.T, env string, get func(Config) any, cases []listFlagCase) {
	t.Helper()
	for _, tc := range cases {
		t.Setenv(env, tc.env)
		if tc.env == "unset" {
			os.Unsetenv(env)
		}
		c, err := Parse("serve", tc.args, io.Discard)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("env %q args %q: error %v, want %q", tc.env, tc.args, err, tc.wantErr)
			}
			continue
		}
		if got := fmt.Sprint(get(c)); err != nil || got != tc.want {
			t.Errorf("env %q args %q: %s, %v; want %s", tc.env, tc.args, got, err, tc.want)
		}
	}
}

func TestBotURLPrivateFlag(t *testing.T) {
	testListFlag(t, "BOTPLATFORM_BOT_URL_PRIVATE", func(c Config) any { return c.BotURLPrivate }, []listFlagCase{
		{"", nil, "[]", ""},
		{"", []string{"--bot-url-private", "10.0.0.0/8, fd00::/8"}, "[10.0.0.0/8 fd00::/8]", ""},
		{"10.1.2.3", nil, "[10.1.2.3/32]", ""},
		{"10.1.2.3/8", []string{"--bot-url-private", "192.168.0.0/16"}, "[192.168.0.0/16]", ""},
		{"", []string{"--bot-url-private", "10.1.2.3/8"}, "[10.0.0.0/8]", ""},
		{"", []string{"--bot-url-private", "internal.example"}, "", `bot-url-private: "internal.example" is not an address range`},
	})
}

func TestBotEgressPortsFlag(t *testing.T) {
	testListFlag(t, "BOTPLATFORM_BOT_EGRESS_PORTS", func(c Config) any { return c.BotEgressPorts }, []listFlagCase{
		{"unset", nil, "[80 443]", ""},
		{"", nil, "[]", ""},
		{"", []string{"--bot-egress-ports", "443, 8443,443"}, "[443 8443]", ""},
		{"5432", nil, "[5432]", ""},
		{"", []string{"--bot-egress-ports", "none"}, "[]", ""},
		{"", []string{"--bot-egress-ports", ""}, "[]", ""},
		{"", []string{"--bot-egress-ports", "https"}, "", `bot-egress-ports: "https" is not a TCP port`},
		{"", []string{"--bot-egress-ports", "70000"}, "", `bot-egress-ports: "70000" is not a TCP port`},
	})
}

func TestBotHostsFlag(t *testing.T) {
	testListFlag(t, "BOTPLATFORM_BOT_HOSTS", func(c Config) any { return c.BotHosts }, []listFlagCase{
		{"", nil, "map[]", ""},
		{"", []string{"--bot-hosts", "API.Example.com.=10.0.0.5, api.example.com=::ffff:10.0.0.6,db.internal=fd00::1"},
			"map[api.example.com:[10.0.0.5 10.0.0.6] db.internal:[fd00::1]]", ""},
		{"x.example=127.0.0.2", nil, "map[x.example:[127.0.0.2]]", ""},
		{"", []string{"--bot-hosts", "api.example.com"}, "", `bot-hosts: "api.example.com" is not an entry such as api.example.com=10.0.0.5`},
		{"", []string{"--bot-hosts", "api.example.com=internal"}, "", `bot-hosts: "api.example.com=internal" is not an entry`},
		{"", []string{"--bot-hosts", "=10.0.0.1"}, "", `bot-hosts: "=10.0.0.1" is not an entry`},
		{"", []string{"--bot-hosts", "http://a=10.0.0.1"}, "", `bot-hosts: "http://a=10.0.0.1" is not an entry`},
	})
}

func TestBotCAFileFlag(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	good := write("ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	keyDER, _ := x509.MarshalECPrivateKey(key)
	withKey := write("with-key.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))+string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})))
	testListFlag(t, "BOTPLATFORM_BOT_CA_FILE", func(c Config) any { return c.BotCAFile }, []listFlagCase{
		{"", nil, "", ""},
		{"", []string{"--bot-ca-file", good}, good, ""},
		{"", []string{"--bot-ca-file", filepath.Join(dir, "missing.pem")}, "", "bot-ca-file: open " + filepath.Join(dir, "missing.pem")},
		{"", []string{"--bot-ca-file", write("empty.pem", "")}, "", "no certificate in it"},
		{"", []string{"--bot-ca-file", write("junk.pem", "not a certificate")}, "", "text that is not a PEM block"},
		{"", []string{"--bot-ca-file", withKey}, "", `a "EC PRIVATE KEY" block, where only certificates belong`},
	})
}
