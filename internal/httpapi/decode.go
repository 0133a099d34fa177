package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/botplatform/botplatform/internal/jsonbody"
	"github.com/botplatform/botplatform/internal/platform"
)

// schema compiles the JSON Schema of a request body. The route that reads
// such a body declares it (table.handle): its handler's decode checks the
// body against it, and the OpenAPI document shows it.
func schema(name, src string) *jsonbody.Schema { return jsonbody.Compile(name, src) }

// decode reads the JSON body, validates it against the schema its route
// declares and decodes it into dst.
func decode(r *http.Request, dst any) error {
	sch, err := routeBody(r)
	if err != nil {
		return err
	}
	return decodeWith(r, sch, dst)
}

// decodeWith is decode with a schema of the caller's choosing.
func decodeWith(r *http.Request, sch *jsonbody.Schema, dst any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return jsonbody.Decode(body, sch, dst)
}

// readBody reads a JSON request body. An empty body counts as {} (the
// clients send {} with DELETE, and some callers send nothing).
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return nil, err
		}
		return nil, platform.Invalid("", "could not read the request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return []byte("{}"), nil
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !jsonType(ct) {
		return nil, platform.Errorf(platform.TypeUnsupportedMedia, "Content-Type %q is not supported: send the body as JSON with Content-Type: application/json", ct)
	}
	return body, nil
}

// jsonType tells whether a Content-Type announces JSON (application/json,
// application/*+json, any parameters). A body without one is read as JSON
// too: the official clients always send one, other callers may not.
func jsonType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// checkURL refuses a NUL character in the path or a query parameter, for
// every route: no id, key or filter may hold one (see platform.CheckJSON).
func checkURL(r *http.Request) error {
	if strings.IndexByte(r.URL.Path, 0) >= 0 {
		return platform.Invalid("path", "contains a NUL character (%%00), which is not allowed")
	}
	if !strings.Contains(r.URL.RawQuery, "%00") {
		return nil
	}
	for name, vals := range r.URL.Query() {
		for _, v := range append(vals, name) {
			if strings.IndexByte(v, 0) >= 0 {
				return platform.Errorf(platform.TypeInvalidQuery, "%s: contains a NUL character (%%00), which is not allowed", strings.ReplaceAll(name, "\x00", "%00"))
			}
		}
	}
	return nil
}

// query reads query parameters in the shape the official clients send:
// repeated keys for lists and dot notation for objects (tags.k=v).
type query struct{ v url.Values }

func newQuery(r *http.Request) query { return query{r.URL.Query()} }

func (q query) str(name string) string { return q.v.Get(name) }

func (q query) list(name string) []string { return q.v[name] }

func (q query) boolean(name string) (*bool, error) {
	s := q.v.Get(name)
	if s == "" {
		return nil, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil || (s != "true" && s != "false") {
		return nil, platform.Errorf(platform.TypeInvalidQuery, "%s: must be true or false", name)
	}
	return &b, nil
}

func (q query) integer(name string) (*int, error) {
	s := q.v.Get(name)
	if s == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return nil, platform.Errorf(platform.TypeInvalidQuery, "%s: must be an integer", name)
	}
	return &n, nil
}

func (q query) enum(name string, allowed ...string) (string, error) {
	s := q.v.Get(name)
	if s == "" {
		return "", nil
	}
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", platform.Errorf(platform.TypeInvalidQuery, "%s: must be one of %s", name, strings.Join(allowed, ", "))
}

// tags reads a tag filter without exclusions (listBots).
func (q query) tags() (map[string][]string, error) {
	in, not, err := q.tagFilter()
	if err == nil && len(not) > 0 {
		err = platform.Errorf(platform.TypeInvalidQuery, "tags: \"not\" is not supported here")
	}
	return in, err
}

// tagFilter reads a tag filter in either form the clients send: dot
// notation (tags.k=v, repeated for any of several values, tags.k.not=v to
// exclude) or URL-encoded JSON (tags={"k":"v","l":["a","b"],"m":{"not":"x"}}).
// Values listed for one key match any of them; all keys must match.
func (q query) tagFilter() (in, not map[string][]string, err error) {
	in, not = map[string][]string{}, map[string][]string{}
	if raw := q.v.Get("tags"); raw != "" {
		var m map[string]any
		if platform.CheckJSON([]byte(raw), "tags") != nil || json.Unmarshal([]byte(raw), &m) != nil {
			return nil, nil, platform.Errorf(platform.TypeInvalidQuery, "tags: must be a JSON object or tags.<key>=<value> parameters")
		}
		for k, v := range m {
			if obj, ok := v.(map[string]any); ok {
				if len(obj) != 1 || obj["not"] == nil {
					return nil, nil, platform.Errorf(platform.TypeInvalidQuery, "tags.%s: an object must be {\"not\": value or list}", k)
				}
				vals, err := strs(k, obj["not"])
				if err != nil {
					return nil, nil, err
				}
				not[k] = append(not[k], vals...)
				continue
			}
			vals, err := strs(k, v)
			if err != nil {
				return nil, nil, err
			}
			in[k] = append(in[k], vals...)
		}
	}
	keys := make([]string, 0)
	for k := range q.v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		tag, ok := strings.CutPrefix(k, "tags.")
		if !ok || tag == "" {
			continue
		}
		if base, ok := strings.CutSuffix(tag, ".not"); ok && base != "" {
			not[base] = append(not[base], q.v[k]...)
			continue
		}
		in[tag] = append(in[tag], q.v[k]...)
	}
	return in, not, nil
}

func strs(k string, v any) ([]string, error) {
	switch v := v.(type) {
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, platform.Errorf(platform.TypeInvalidQuery, "tags.%s: values must be strings", k)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, platform.Errorf(platform.TypeInvalidQuery, "tags.%s: must be a string or a list of strings", k)
}
