package main

// An operator's static host entries (--bot-hosts) and extra certificate
// authorities (--bot-ca-file) for bot and integration code: a name stands
// for an address of the deployment's own network, reached over TLS with a
// certificate of the operator's CA, by a sandboxed bundle and by the VM's
// fetch alike.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/sandbox"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// testCA makes a certificate authority and a server certificate it signed
// for names; it returns the CA's PEM file and the server's certificate.
func testCA(t *testing.T, names ...string) (caFile string, cert tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "operator's test CA"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	return caFile, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func TestBotHostsAndCA(t *testing.T) {
	t.Parallel()
	needNode(t)
	if err := sandbox.Available(); err != nil {
		t.Skipf("no sandbox on this machine: %v", err)
	}
	caFile, cert := testCA(t, "api.internal.test")
	// 127.0.0.3 stands for an address of the deployment's own network.
	ln, err := tls.Listen("tcp", "127.0.0.3:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"host":%q}`, r.Host)
	}))
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	url := "https://api.internal.test:" + port + "/hello"
	// No --bot-fetch-private: the address is reachable because the operator named it.
	flags := append([]string{"--bot-egress-ports", port, "--bot-hosts", "api.internal.test=127.0.0.3"}, runtimeFlags...)
	askBundle := func(t *testing.T, s *testServer) string {
		e := newChatEnv(t, s)
		e.deploy(nodeFetchBundle, nil)
		u := e.createUser(nil)
		return textOf(e.ask(u, e.conversation(u, ""), url))
	}
	askVM := func(t *testing.T, s *testServer) string {
		e := newBotEnv(t, s, fetchJS(""), nil)
		e.admin.put("/v1/admin/bots/"+e.botID+"/fetch", map[string]any{"hosts": []string{"api.internal.test"}}).ok()
		u := e.user("fetcher")
		return textOf(e.ask(u, e.conversation(u, ""), url))
	}

	runScenarios(t, []scenario{
		{"a bundle reaches the name's address and trusts the operator's CA", func(t *testing.T, s *testServer) {
			if got := askBundle(t, s); got != `200 {"host":"api.internal.test:`+port+`"}` {
				t.Fatalf("reply = %q", got)
			}
		}},
		{"so does the VM's fetch", func(t *testing.T, s *testServer) {
			if got := askVM(t, s); got != `200 application/json {"host":"api.internal.test:`+port+`"}` {
				t.Fatalf("reply = %q", got)
			}
		}},
	}, append(flags, "--bot-ca-file", caFile)...)

	t.Run("without the CA, the certificate is not trusted", func(t *testing.T) {
		s := startBackendWith(t, storetest.Backends[0], flags...)
		if got := askBundle(t, s); !strings.HasPrefix(got, "failed: UNABLE_TO_VERIFY_LEAF_SIGNATURE") {
			t.Errorf("bundle: reply = %q", got)
		}
		if got := askVM(t, s); !strings.Contains(got, "certificate signed by unknown authority") {
			t.Errorf("VM: reply = %q", got)
		}
	})
}
