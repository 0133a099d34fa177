package internal_test

import (
	"os/exec"
	"strings"
	"testing"
)

// module is the import path every package of this server starts with.
const module = "github.com/botplatform/botplatform/"

// heavy names the dependencies that must stay out of the light packages:
// the JavaScript VM, the Node bot host, the AI client and the packages that
// bring them and the PDF code in (the executors of bot code, indexing). A service that needs one of them
// declares a small interface and cmd/botplatform injects the implementation.
var heavy = []struct{ path, what string }{
	{module + "internal/botruntime", "the bot runtime"},
	{module + "internal/indexing", "indexing and its parsers"},
	{module + "internal/ai", "the AI client"},
	{module + "internal/nodehost", "the Node bot host"},
	{module + "internal/sdkbot", "the SDK bots' executor"},
	{module + "internal/integration", "the integrations' runner"},
	{"github.com/dop251/goja", "the JavaScript VM"},
}

// heaviness says what makes pkg heavy, or "" when it is not.
func heaviness(pkg string) string {
	for _, h := range heavy {
		if pkg == h.path || strings.HasPrefix(pkg, h.path+"/") || strings.HasPrefix(pkg, h.path+"_") {
			return h.what
		}
	}
	if strings.Contains(strings.ToLower(pkg), "pdf") {
		return "PDF code"
	}
	return ""
}

// TestLightPackages keeps the services that only hold rules light: they
// build, test and start without the bot runtime's VM, the Node bot host,
// the PDF parsers or the AI client. The dispatcher among them: it hands
// events to executors it knows only by their interface.
func TestLightPackages(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list dependencies: %v", err)
	}
	for _, pkg := range []string{"./admin", "./files", "./chat", "./aispend", "./runtimeapi", "./tables", "./botarchive", "./dispatch"} {
		t.Run(strings.TrimPrefix(pkg, "./"), func(t *testing.T) {
			out, err := exec.Command(goTool, "list", "-deps", pkg).Output()
			if err != nil {
				var stderr []byte
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = ee.Stderr
				}
				t.Fatalf("go list -deps %s: %v\n%s", pkg, err, stderr)
			}
			var found []string
			for _, dep := range strings.Fields(string(out)) {
				if what := heaviness(dep); what != "" {
					found = append(found, dep+" ("+what+")")
				}
			}
			if len(found) > 0 {
				t.Errorf("internal/%s depends on:\n\t%s\ndeclare an interface where it is used and inject the implementation in cmd/botplatform",
					strings.TrimPrefix(pkg, "./"), strings.Join(found, "\n\t"))
			}
		})
	}
}
