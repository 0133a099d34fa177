package openapi_test

import (
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/openapi"
)

// TestBuildNamesWhatIsMissing: a route without a description, or served
// twice, fails the build, naming it.
func TestBuildNamesWhatIsMissing(t *testing.T) {
	_, err := openapi.Build([]openapi.Route{
		{Method: "GET", Path: "/v1/files/{id}", ID: "getFile", Tag: "Files", Auth: openapi.Bot},
		{Method: "GET", Path: "/v1/files/{id}/again", ID: "getFile", Tag: "Files", Auth: openapi.Bot},
		{Method: "GET", Path: "/v1/nothing", ID: "getNothing", Tag: "Files"},
	}, openapi.Info{Version: "x"})
	if err == nil || !strings.Contains(err.Error(), `"getNothing"`) || !strings.Contains(err.Error(), "/v1/files/{id}/again") {
		t.Fatalf("Build: %v, want an error naming getNothing and the second getFile", err)
	}
}
