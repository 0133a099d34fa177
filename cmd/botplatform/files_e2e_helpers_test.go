package main

// Helpers of the Files API end-to-end tests: a Files API caller (bearer
// token + x-bot-id and the other context headers), the file object, uploads
// to and downloads from the signed URLs the server hands out, and the
// workspace storage usage.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// apiFile is the file object (spec 2.1) with uploadUrl.
type apiFile struct {
	ID                 string            `json:"id"`
	BotID              string            `json:"botId"`
	Key                string            `json:"key"`
	URL                string            `json:"url"`
	Size               *int64            `json:"size"`
	ContentType        string            `json:"contentType"`
	Tags               map[string]string `json:"tags"`
	Metadata           map[string]any    `json:"metadata"`
	CreatedAt          string            `json:"createdAt"`
	UpdatedAt          string            `json:"updatedAt"`
	AccessPolicies     []string          `json:"accessPolicies"`
	Index              bool              `json:"index"`
	Status             string            `json:"status"`
	FailedStatusReason *string           `json:"failedStatusReason"`
	ExpiresAt          *string           `json:"expiresAt"`
	Owner              map[string]any    `json:"owner"`
	IndexingStack      *string           `json:"indexingStack"`
	UploadURL          string            `json:"uploadUrl"`
}

// requiredFileFields are the fields spec 2.1 marks required. uploadUrl is
// required too, for callers that may write: it is a write capability, and
// the server may keep it from read-only callers (viewers).
var requiredFileFields = []string{"id", "botId", "key", "url", "size", "contentType", "tags", "metadata", "createdAt",
	"updatedAt", "accessPolicies", "index", "status", "owner"}

var fileStatuses = map[string]bool{"upload_pending": true, "upload_failed": true, "upload_completed": true,
	"indexing_pending": true, "indexing_failed": true, "indexing_completed": true}

// checkFile checks the shape of one raw file object and decodes it;
// readOnly callers need not get an uploadUrl.
func checkFile(t *testing.T, what string, raw json.RawMessage, readOnly bool) apiFile {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: file is not an object: %v: %s", what, err, raw)
	}
	for _, k := range requiredFileFields {
		if _, ok := m[k]; !ok {
			t.Errorf("%s: file lacks the required field %q: %s", what, k, raw)
		}
	}
	if _, ok := m["uploadUrl"]; !ok && !readOnly {
		t.Errorf("%s: file lacks uploadUrl: %s", what, raw)
	}
	var f apiFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("%s: %v: %s", what, err, raw)
	}
	if !fileStatuses[f.Status] {
		t.Errorf("%s: status %q is not one of spec 3", what, f.Status)
	}
	if (f.FailedStatusReason != nil) != (f.Status == "upload_failed" || f.Status == "indexing_failed") {
		t.Errorf("%s: status %s with failedStatusReason %v", what, f.Status, f.FailedStatusReason)
	}
	for _, ts := range []string{f.CreatedAt, f.UpdatedAt} {
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil || !strings.HasSuffix(ts, "Z") {
			t.Errorf("%s: timestamp %q is not ISO 8601 UTC", what, ts)
		}
	}
	if f.Tags == nil || f.Metadata == nil || f.AccessPolicies == nil || f.Owner == nil {
		t.Errorf("%s: tags, metadata, accessPolicies and owner must not be null: %s", what, raw)
	}
	if !strings.HasPrefix(f.URL, "http") || (f.UploadURL != "" || !readOnly) && !strings.HasPrefix(f.UploadURL, "http") {
		t.Errorf("%s: url %q and uploadUrl %q must be absolute", what, f.URL, f.UploadURL)
	}
	return f
}

// filesClient calls the Files API as one token with context headers.
type filesClient struct {
	c        client
	hdr      []string
	readOnly bool // a viewer: file objects may come without uploadUrl
}

// files returns a Files API caller for botID ("" sends no x-bot-id).
func (s *testServer) files(t *testing.T, token, botID string, hdr ...string) filesClient {
	f := filesClient{c: s.as(t, token, "")}
	if botID != "" {
		f.hdr = append(f.hdr, "x-bot-id", botID)
	}
	f.hdr = append(f.hdr, hdr...)
	return f
}

// with returns the same caller with more headers.
func (f filesClient) with(hdr ...string) filesClient {
	f.hdr = append(append([]string(nil), f.hdr...), hdr...)
	return f
}

func (f filesClient) do(method, path string, body any) *response {
	f.c.t.Helper()
	return f.c.raw(method, path, body, f.hdr...)
}

func (f filesClient) upsert(body map[string]any) *response {
	f.c.t.Helper()
	return f.do(http.MethodPut, "/v1/files", body)
}

// file requires 200 with a {file} body and returns the file.
func (r *response) file() apiFile { r.t.Helper(); return r.fileAs(false) }

func (r *response) fileAs(readOnly bool) apiFile {
	r.t.Helper()
	var out struct {
		File json.RawMessage `json:"file"`
	}
	r.decode(&out)
	if out.File == nil {
		r.t.Fatalf("%s: no file in %s", r.what, r.Body)
	}
	return checkFile(r.t, r.what, out.File, readOnly)
}

func (f filesClient) mustUpsert(body map[string]any) apiFile {
	f.c.t.Helper()
	return f.upsert(body).file()
}

func (f filesClient) get(id string) *response {
	f.c.t.Helper()
	return f.do(http.MethodGet, "/v1/files/"+url.PathEscape(id), nil)
}

func (f filesClient) getFile(id string) apiFile {
	f.c.t.Helper()
	return f.get(id).fileAs(f.readOnly)
}

func (f filesClient) update(id string, body any) *response {
	f.c.t.Helper()
	return f.do(http.MethodPut, "/v1/files/"+url.PathEscape(id), body)
}

func (f filesClient) del(id string) *response {
	f.c.t.Helper()
	return f.do(http.MethodDelete, "/v1/files/"+url.PathEscape(id), "{}")
}

// copy sends copyFile with the path parameters escaped like the client does.
func (f filesClient) copy(idOrKey, destKey string, body any) *response {
	f.c.t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	return f.do(http.MethodPost, "/v1/files/"+url.PathEscape(idOrKey)+"/"+url.PathEscape(destKey), body)
}

type fileList struct {
	Files []apiFile
	Next  string
}

// list sends listFiles with a raw query ("" or "?…") and checks the shape.
func (f filesClient) list(query string) fileList {
	f.c.t.Helper()
	r := f.do(http.MethodGet, "/v1/files"+query, nil)
	var out struct {
		Files []json.RawMessage `json:"files"`
		Meta  *struct {
			NextToken *string `json:"nextToken"`
		} `json:"meta"`
	}
	r.decode(&out)
	if out.Files == nil || out.Meta == nil {
		f.c.t.Fatalf("%s: want files and meta: %s", r.what, r.Body)
	}
	var l fileList
	for _, raw := range out.Files {
		l.Files = append(l.Files, checkFile(f.c.t, r.what, raw, f.readOnly))
	}
	if out.Meta.NextToken != nil {
		l.Next = *out.Meta.NextToken
	}
	return l
}

// listAll pages through listFiles and returns every file in order.
func (f filesClient) listAll(query string, pageSize int) []apiFile {
	f.c.t.Helper()
	var all []apiFile
	next := ""
	for page := 0; ; page++ {
		q := query + sep(query) + fmt.Sprintf("pageSize=%d", pageSize)
		if next != "" {
			q += "&nextToken=" + url.QueryEscape(next)
		}
		l := f.list(q)
		if len(l.Files) > pageSize {
			f.c.t.Fatalf("listFiles%s: %d files on a page of %d", q, len(l.Files), pageSize)
		}
		all = append(all, l.Files...)
		if next = l.Next; next == "" {
			return all
		}
		if page > 100 {
			f.c.t.Fatalf("listFiles%s: nextToken never ends", query)
		}
	}
}

func sep(query string) string {
	if query == "" {
		return "?"
	}
	return "&"
}

func keysOf(files []apiFile) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Key
	}
	return out
}

func sortedKeysOf(files []apiFile) []string {
	out := keysOf(files)
	sort.Strings(out)
	return out
}

// strList pages through listFileTags or listFileTagValues.
func (f filesClient) strList(path, field string, pageSize int) []string {
	f.c.t.Helper()
	var all []string
	next := ""
	for page := 0; ; page++ {
		q := fmt.Sprintf("%s?pageSize=%d", path, pageSize)
		if next != "" {
			q += "&nextToken=" + url.QueryEscape(next)
		}
		r := f.do(http.MethodGet, q, nil)
		var out map[string]json.RawMessage
		r.decode(&out)
		var items []string
		var meta struct {
			NextToken string `json:"nextToken"`
		}
		if err := json.Unmarshal(out[field], &items); err != nil || items == nil {
			f.c.t.Fatalf("%s: want a %s array: %s", r.what, field, r.Body)
		}
		if err := json.Unmarshal(out["meta"], &meta); err != nil {
			f.c.t.Fatalf("%s: want meta: %s", r.what, r.Body)
		}
		if len(items) > pageSize {
			f.c.t.Fatalf("%s: %d items on a page of %d", r.what, len(items), pageSize)
		}
		all = append(all, items...)
		if next = meta.NextToken; next == "" {
			return all
		}
		if page > 100 {
			f.c.t.Fatalf("%s: nextToken never ends", path)
		}
	}
}

// relative turns an absolute URL the server handed out into a path for
// client.raw, requiring that it points at this server.
func (s *testServer) relative(t *testing.T, u string) string {
	t.Helper()
	p, ok := strings.CutPrefix(u, s.URL+"/")
	if !ok {
		t.Fatalf("URL %q is not under the server's public URL %s", u, s.URL)
	}
	return "/" + p
}

// upload sends content to an uploadUrl like the official client: no
// credentials, Content-Type of the file, optional extra headers.
func (s *testServer) upload(t *testing.T, uploadURL, contentType string, body []byte, hdr ...string) *response {
	t.Helper()
	return s.as(t, "", "").raw(http.MethodPut, s.relative(t, uploadURL), body, append([]string{"Content-Type", contentType}, hdr...)...)
}

// fetch downloads a file url without credentials.
func (s *testServer) fetch(t *testing.T, fileURL string, hdr ...string) *response {
	t.Helper()
	return s.as(t, "", "").raw(http.MethodGet, s.relative(t, fileURL), nil, hdr...)
}

// create upserts a file with content and uploads it; it returns the file
// as getFile shows it afterwards.
func (f filesClient) create(s *testServer, key string, content []byte, extra map[string]any) apiFile {
	t := f.c.t
	t.Helper()
	body := map[string]any{"key": key, "size": len(content)}
	for k, v := range extra {
		body[k] = v
	}
	up := f.mustUpsert(body)
	var hdr []string
	if body["publicContentImmediatelyAccessible"] == true {
		hdr = []string{"x-amz-tagging", "public=true"}
	}
	if r := s.upload(t, up.UploadURL, up.ContentType, content, hdr...); r.Status != http.StatusOK {
		t.Fatalf("upload of %s: status %d: %s", key, r.Status, r.Body)
	}
	return f.getFile(up.ID)
}

// withQuery returns u with query parameter name set to value ("" removes it).
func withQuery(t *testing.T, u, name, value string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatalf("parse %q: %v", u, err)
	}
	q := p.Query()
	if value == "" {
		q.Del(name)
	} else {
		q.Set(name, value)
	}
	p.RawQuery = q.Encode()
	return p.String()
}

func queryOf(t *testing.T, u, name string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatalf("parse %q: %v", u, err)
	}
	return p.Query().Get(name)
}

// storageUsage is the value of listWorkspaceUsages for one quota type.
func storageUsage(t *testing.T, ws client, typ string) int64 {
	t.Helper()
	var out struct {
		Usages []struct {
			Type  string `json:"type"`
			Value int64  `json:"value"`
			Quota int64  `json:"quota"`
		} `json:"usages"`
	}
	ws.in("").get("/v1/admin/workspaces/" + ws.ws + "/usages?type=" + typ).decode(&out)
	if len(out.Usages) != 1 || out.Usages[0].Type != typ {
		t.Fatalf("usages?type=%s: %+v", typ, out.Usages)
	}
	return out.Usages[0].Value
}

// setQuotas changes the workspace's limits (owner).
func setQuotas(t *testing.T, ws client, body map[string]any) {
	t.Helper()
	ws.in("").put("/v1/admin/workspaces/"+ws.ws+"/quotas", body).ok()
}

// cutUpload sends a PUT to uploadURL announcing declared bytes but sending
// only body, then closes its side of the connection and waits until the
// server has finished with the request (it answers or closes).
func (s *testServer) cutUpload(t *testing.T, uploadURL string, declared int, body []byte) {
	t.Helper()
	path := s.relative(t, uploadURL)
	host := strings.TrimPrefix(s.URL, "http://")
	conn, err := net.DialTimeout("tcp", host, 10*time.Second)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n", path, host, declared)
	if _, err := conn.Write(body); err != nil {
		t.Fatalf("write: %v", err)
	}
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatalf("close write: %v", err)
	}
	// The server answers (its handler saw the body end early) or closes the
	// connection; either way it is done with the request.
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil && line == "" {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("the server neither answered nor closed a cut upload within 20s")
		}
	}
	if strings.Contains(line, " 200 ") {
		t.Fatalf("a cut upload was answered %q", line)
	}
}

// listRaw sends listFiles and returns the response as is.
func (f filesClient) listRaw(query string) *response {
	f.c.t.Helper()
	return f.do(http.MethodGet, "/v1/files"+query, nil)
}

// nextMillisecond returns once the wall clock has entered a new
// millisecond, so that a later change gets a later (millisecond) timestamp.
func nextMillisecond() {
	for t0 := time.Now().UnixMilli(); time.Now().UnixMilli() == t0; {
		runtime.Gosched()
	}
}
