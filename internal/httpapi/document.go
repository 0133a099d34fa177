package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/botplatform/botplatform/internal/openapi"
)

// Document returns the OpenAPI document New(d) serves at /openapi.json.
func Document(d Deps) []byte { return build(d).doc }

// document is the OpenAPI document of the route tables, served as is.
type document struct {
	body []byte
	etag string
}

// build makes the document of the tables' operations.
func (d *document) build(tables []*table, version string) {
	var routes []openapi.Route
	for _, t := range tables {
		routes = append(routes, t.ops...)
	}
	body, err := openapi.Build(routes, openapi.Info{Version: version})
	if err != nil {
		panic(err) // a route table and internal/openapi disagree: the tests say which
	}
	sum := sha256.Sum256(body)
	d.body, d.etag = body, `"`+hex.EncodeToString(sum[:16])+`"`
}

// ServeHTTP answers the document. It changes only with the server's
// version and flags, so caches may keep it a while, then revalidate it by
// its ETag.
func (d *document) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Header().Set("ETag", d.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(d.body))
}
