package main

// The Node host's bot API key: derived from a secret of the server's that
// no API returns, so that nothing a workspace member reads lets it call the
// platform as the bot (docs/sdk-bots.md#the-node-bot-host).

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/platform"
)

func TestHostKeys(t *testing.T) {
	t.Parallel()
	runScenarios(t, []scenario{
		{"a viewer cannot act as the bot with any key it can compute", testViewerCannotActAsBot},
	})
}

// legacyHostKey is the Node host's key as earlier builds derived it, from
// the bot's signing secret alone.
func legacyHostKey(signingSecret, botID string) string {
	m := hmac.New(sha256.New, []byte(signingSecret))
	m.Write([]byte("node-host:" + botID))
	return "bp_bak_" + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func testViewerCannotActAsBot(t *testing.T, s *testServer) {
	e := newChatEnv(t, s)
	viewer, _ := e.admin.addMember("viewer")
	signing := str(t, e.admin.get("/v1/admin/bots/"+e.botID).ok(), "bot", "signingSecret")
	seen, _ := field(t, viewer.get("/v1/admin/bots/"+e.botID).ok(), "bot", "signingSecret").(string)

	// The database as an earlier build left it: the host's key derived from
	// the signing secret, in its row. The keys of this build replace it.
	legacy := legacyHostKey(signing, e.botID)
	sum := sha256.Sum256([]byte(legacy))
	row := platform.Token{ID: platform.PrefixBotKey + "host" + strings.TrimPrefix(e.botID, platform.PrefixBot), OwnerID: e.botID,
		Note: "the bot host's key: Node bundles call the platform with it", Hash: sum[:]}
	if err := e.store().CreateBotKey(context.Background(), e.admin.ws, row); err != nil {
		t.Fatalf("writing the earlier build's host key: %v", err)
	}

	state := "/v1/chat/states/bot/" + e.botID + "/taken"
	for name, key := range map[string]string{
		"the host key derived from the signing secret":              legacy,
		"the host key derived from what the viewer's getBot showed": legacyHostKey(seen, e.botID),
	} {
		if status, body := e.runtimeCall(key, http.MethodPost, state, map[string]any{"payload": map[string]any{"by": "viewer"}}); status != http.StatusUnauthorized {
			t.Errorf("setState with %s: %d %v, want 401", name, status, body)
		}
	}
	// The viewer's own token reads, never writes.
	if status, _ := e.runtimeCall(viewer.token, http.MethodPost, state, map[string]any{"payload": map[string]any{}}); status != http.StatusForbidden {
		t.Errorf("setState with the viewer's token: %d, want 403", status)
	}
	if status, _ := e.runtimeCall(viewer.token, http.MethodGet, state, nil); status != http.StatusNotFound {
		t.Errorf("getState of a state nobody set: %d, want 404", status)
	}
}
