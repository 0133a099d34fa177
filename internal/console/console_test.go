package console

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, c *Console, path string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	c.ServeHTTP(w, req)
	return w
}

var assetRe = regexp.MustCompile(`(?:src|href)="(v-[0-9a-f]{16}/[^"]+)"`)

// TestConsoleServes: the page names its assets under their hash directory,
// which are cached for long and revalidated by ETag; every answer, errors
// included, carries the security headers.
func TestConsoleServes(t *testing.T) {
	c := New()
	page := get(t, c, "/console/")
	if page.Code != 200 || !strings.HasPrefix(page.Header().Get("Content-Type"), "text/html") || page.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("GET /console/: %d %q %q", page.Code, page.Header().Get("Content-Type"), page.Header().Get("Cache-Control"))
	}
	refs := assetRe.FindAllStringSubmatch(page.Body.String(), -1)
	if len(refs) < 3 || strings.Contains(page.Body.String(), "<script>") {
		t.Fatalf("the page references %d assets (and must hold no inline script):\n%s", len(refs), page.Body)
	}
	for _, m := range refs {
		a := get(t, c, "/console/"+m[1])
		if a.Code != 200 || !strings.Contains(a.Header().Get("Cache-Control"), "immutable") || a.Header().Get("ETag") == "" {
			t.Errorf("%s: %d, Cache-Control %q, ETag %q", m[1], a.Code, a.Header().Get("Cache-Control"), a.Header().Get("ETag"))
		}
		if strings.HasSuffix(m[1], ".js") && !strings.HasPrefix(a.Header().Get("Content-Type"), "text/javascript") {
			t.Errorf("%s: Content-Type %q", m[1], a.Header().Get("Content-Type"))
		}
		if again := get(t, c, "/console/"+m[1], "If-None-Match", a.Header().Get("ETag")); again.Code != http.StatusNotModified {
			t.Errorf("%s with its ETag: %d, want 304", m[1], again.Code)
		}
	}
	for path, want := range map[string]int{
		"/console":                               http.StatusMovedPermanently,
		"/console/v-0000000000000000/js/main.js": http.StatusNotFound, // another build's
		"/console/" + c.version + "/nothing.js":  http.StatusNotFound,
		"/console/" + c.version + "/index.html":  http.StatusNotFound, // the page is only at /console/
	} {
		w := get(t, c, path)
		if w.Code != want {
			t.Errorf("GET %s: %d, want %d", path, w.Code, want)
		}
		for h, v := range securityHeaders {
			if w.Header().Get(h) != v {
				t.Errorf("GET %s: %s %q, want %q", path, h, w.Header().Get(h), v)
			}
		}
	}
	if loc := get(t, c, "/console").Header().Get("Location"); loc != "/console/" {
		t.Errorf("GET /console redirects to %q", loc)
	}
}
