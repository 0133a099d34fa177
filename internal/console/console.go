// Package console serves the web console: a page and its assets, embedded in the binary, that drive the public APIs from the browser.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed assets
var embedded embed.FS

// Prefix is where the console is served.
const Prefix = "/console/"

// indexName is the page; it names the assets' directory as {{assets}}.
const indexName = "index.html"

// securityHeaders go on every console response. The page runs only the
// scripts it is served with (no inline script, nothing from elsewhere),
// talks only to this origin, and may not be framed.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	"X-Frame-Options":              "DENY",
	"X-Content-Type-Options":       "nosniff",
	"Referrer-Policy":              "no-referrer",
	"Cross-Origin-Opener-Policy":   "same-origin",
	"Cross-Origin-Resource-Policy": "same-origin",
}

// Console serves the page at /console/ and its assets under
// /console/<version>/, where version is a hash of all the assets: a new
// binary with other assets serves them at another address, so browsers may
// keep them for a year.
type Console struct {
	version string
	index   asset
	assets  map[string]asset // by path under the version directory
}

type asset struct {
	body        []byte
	etag, ctype string
}

// New reads the embedded assets.
func New() *Console {
	sub, err := fs.Sub(embedded, "assets")
	if err != nil {
		panic(err)
	}
	c, err := load(sub)
	if err != nil {
		panic("console: " + err.Error()) // the embedded files are part of the build
	}
	return c
}

// load reads the assets of fsys: the page and every other file.
func load(fsys fs.FS) (*Console, error) {
	c := &Console{assets: map[string]asset{}}
	tree := sha256.New()
	var page []byte
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		tree.Write([]byte(name + "\x00"))
		tree.Write(body)
		tree.Write([]byte{0})
		if name == indexName {
			page = body
			return nil
		}
		c.assets[name] = newAsset(name, body)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if page == nil {
		return nil, fs.ErrNotExist
	}
	c.version = "v-" + hex.EncodeToString(tree.Sum(nil)[:8])
	c.index = newAsset(indexName, bytes.ReplaceAll(page, []byte("{{assets}}"), []byte(c.version)))
	return c, nil
}

func newAsset(name string, body []byte) asset {
	sum := sha256.Sum256(body)
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" || strings.HasPrefix(name, "vendor/") && path.Ext(name) != ".js" {
		ctype = "text/plain; charset=utf-8" // licences and notes
	}
	return asset{body: body, etag: `"` + hex.EncodeToString(sum[:16]) + `"`, ctype: ctype}
}

// ServeHTTP answers GET /console (a redirect), /console/ (the page) and
// /console/<version>/<asset>.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for k, v := range securityHeaders {
		w.Header().Set(k, v)
	}
	p := r.URL.Path
	switch {
	case p == strings.TrimSuffix(Prefix, "/"):
		http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
	case p == Prefix:
		// Revalidated every time, so a new binary's page (and with it
		// its assets' new address) is seen at once.
		c.serve(w, r, c.index, "no-cache")
	default:
		version, name, _ := strings.Cut(strings.TrimPrefix(p, Prefix), "/")
		a, ok := c.assets[name]
		if version != c.version || !ok {
			http.NotFound(w, r)
			return
		}
		c.serve(w, r, a, "public, max-age=31536000, immutable")
	}
}

func (c *Console) serve(w http.ResponseWriter, r *http.Request, a asset, cache string) {
	w.Header().Set("Content-Type", a.ctype)
	w.Header().Set("Cache-Control", cache)
	w.Header().Set("ETag", a.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}
