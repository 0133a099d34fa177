package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize"
)

// file is what the commands need of a file.
type file struct {
	ID                 string            `json:"id"`
	Key                string            `json:"key"`
	URL                string            `json:"url,omitempty"`
	Size               *int64            `json:"size"`
	ContentType        string            `json:"contentType"`
	Tags               map[string]string `json:"tags"`
	Index              bool              `json:"index"`
	Status             string            `json:"status"`
	FailedStatusReason string            `json:"failedStatusReason,omitempty"`
	CreatedAt          string            `json:"createdAt"`
	UpdatedAt          string            `json:"updatedAt"`
	UploadURL          string            `json:"uploadUrl,omitempty"`
}

// done tells whether nothing more will happen to the file by itself.
func (f file) done() bool {
	switch f.Status {
	case "upload_failed", "indexing_failed", "indexing_completed":
		return true
	case "upload_completed":
		return !f.Index
	}
	return false
}

func (f file) failed() bool { return strings.HasSuffix(f.Status, "_failed") }

// tagQuery adds tag filters to q in the query-string shape of the
// official clients (tags.k=v).
func tagQuery(q url.Values, tags tagFlags) {
	for k, v := range tags {
		q.Set("tags."+k, v)
	}
}

func filesListFlags(fs *flag.FlagSet, e *env) {
	fs.Var(&e.opts.tags, "tag", "only files with this tag (KEY=VALUE; repeat for several)")
}

// listFiles lists a bot's files (with tags), page after page.
func listFiles(ctx context.Context, e *env, botID string, tags tagFlags, stop func(file) bool) ([]file, error) {
	q := url.Values{"pageSize": {"100"}}
	tagQuery(q, tags)
	var all []file
	for {
		var resp struct {
			Files []file `json:"files"`
			Meta  struct {
				NextToken string `json:"nextToken"`
			} `json:"meta"`
		}
		if err := e.cl.do(ctx, call{method: "GET", path: "/v1/files", query: q, botID: botID, out: &resp}); err != nil {
			return nil, err
		}
		for _, f := range resp.Files {
			all = append(all, f)
			if stop != nil && stop(f) {
				return all, nil
			}
		}
		if resp.Meta.NextToken == "" {
			return all, nil
		}
		q.Set("nextToken", resp.Meta.NextToken)
	}
}

// findFile finds a bot's file by key (or by id).
func findFile(ctx context.Context, e *env, botID, key string) (file, error) {
	if strings.HasPrefix(key, "file_") {
		var resp struct{ File file }
		err := e.cl.do(ctx, call{method: "GET", path: "/v1/files/" + esc(key), botID: botID, out: &resp})
		if err == nil || !isNotFound(err) {
			return resp.File, err
		}
	}
	files, err := listFiles(ctx, e, botID, nil, func(f file) bool { return f.Key == key })
	if err != nil {
		return file{}, err
	}
	if n := len(files); n > 0 && files[n-1].Key == key {
		return files[n-1], nil
	}
	return file{}, fmt.Errorf("the bot has no file with the key %q", key)
}

func filesList(ctx context.Context, e *env, args []string) error {
	b, err := findBot(ctx, e, args[0])
	if err != nil {
		return err
	}
	files, err := listFiles(ctx, e, b.ID, e.opts.tags, nil)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(map[string]any{"files": files})
	}
	tw := tabwriter.NewWriter(e.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tSIZE\tSTATUS\tTAGS\tID")
	for _, f := range files {
		size := "-"
		if f.Size != nil {
			size = humanize.IBytes(uint64(*f.Size))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Key, size, f.Status, tagString(f.Tags), f.ID)
	}
	return tw.Flush()
}

func tagString(tags map[string]string) string {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = k + "=" + tags[k]
	}
	return strings.Join(keys, ",")
}

func filesGetFlags(fs *flag.FlagSet, e *env) {
	fs.StringVar(&e.opts.output, "o", "", "write the content to this file (default: standard output)")
}

// botFile finds a bot and one of its files, by the command's first two
// arguments.
func botFile(ctx context.Context, e *env, args []string) (bot, file, error) {
	b, err := findBot(ctx, e, args[0])
	if err != nil {
		return b, file{}, err
	}
	f, err := findFile(ctx, e, b.ID, args[1])
	return b, f, err
}

func filesGet(ctx context.Context, e *env, args []string) error {
	_, f, err := botFile(ctx, e, args)
	if err != nil {
		return err
	}
	if f.URL == "" {
		return fmt.Errorf("file %q has no content yet (status %s)", f.Key, f.Status)
	}
	resp, err := e.cl.send(ctx, call{method: "GET", path: f.URL, anonymous: true})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if e.opts.output == "" {
		_, err = io.Copy(e.Out, resp.Body)
		return err
	}
	return writeFileAtomic(e.opts.output, resp.Body)
}

// writeFileAtomic writes r to name through a temporary file, so a failed
// download leaves no partial file behind.
func writeFileAtomic(name string, r io.Reader) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	if _, err = io.Copy(tmp, r); err == nil {
		err = tmp.Close()
	} else {
		tmp.Close()
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

func filesRemove(ctx context.Context, e *env, args []string) error {
	b, f, err := botFile(ctx, e, args)
	if err != nil {
		return err
	}
	if err := e.cl.do(ctx, call{method: "DELETE", path: "/v1/files/" + esc(f.ID), botID: b.ID, body: struct{}{}}); err != nil {
		return err
	}
	if !e.json {
		fmt.Fprintf(e.Out, "deleted %s (%s)\n", f.Key, f.ID)
	}
	return nil
}

func filesSearchFlags(fs *flag.FlagSet, e *env) {
	fs.IntVar(&e.opts.limit, "limit", 5, "how many passages")
	fs.Var(&e.opts.tags, "tag", "only files with this tag (KEY=VALUE; repeat for several)")
}

func filesSearch(ctx context.Context, e *env, args []string) error {
	b, err := findBot(ctx, e, args[0])
	if err != nil {
		return err
	}
	q := url.Values{"query": {args[1]}, "limit": {fmt.Sprint(e.opts.limit)}}
	tagQuery(q, e.opts.tags)
	var resp struct {
		Passages []struct {
			Content string         `json:"content"`
			Score   float64        `json:"score"`
			Meta    map[string]any `json:"meta"`
			File    struct {
				ID  string `json:"id"`
				Key string `json:"key"`
			} `json:"file"`
		} `json:"passages"`
	}
	if err := e.cl.do(ctx, call{method: "GET", path: "/v1/files/search", query: q, botID: b.ID, out: &resp}); err != nil {
		return err
	}
	if e.json {
		return e.printJSON(resp)
	}
	if len(resp.Passages) == 0 {
		fmt.Fprintln(e.Out, "no passage found")
	}
	// The fused score (0.033 at best) means little to a reader: each
	// passage's match is said against the best one's (--json has the score).
	for i, p := range resp.Passages {
		where := p.File.Key
		if n, ok := p.Meta["pageNumber"].(float64); ok {
			where += fmt.Sprintf(", page %d", int(n))
		}
		match := 100.0
		if best := resp.Passages[0].Score; best > 0 {
			match = 100 * p.Score / best
		}
		fmt.Fprintf(e.Out, "%d. %s (match %.0f%% of the best)\n%s\n\n", i+1, where, match, indent(p.Content, "   "))
	}
	return nil
}

func indent(s, pad string) string {
	return pad + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n"+pad)
}

// upload is one local file to store under key.
type upload struct {
	path, key string
	size      int64
}

// uploads expands the paths given to `files put`: a directory stands for
// every regular file under it (hidden ones left out), stored under its
// own name followed by the path inside it (docs/faq/a.md).
func uploads(args []string, prefix string) ([]upload, error) {
	var out []upload
	for _, arg := range args {
		info, err := os.Stat(arg)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			out = append(out, upload{arg, path.Join(prefix, filepath.Base(arg)), info.Size()})
			continue
		}
		root := filepath.Base(filepath.Clean(arg))
		if root == "." || root == string(filepath.Separator) {
			root = ""
		}
		// A directory given through a symbolic link is walked too.
		walk, err := filepath.EvalSymlinks(arg)
		if err != nil {
			return nil, err
		}
		err = filepath.WalkDir(walk, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p != walk && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(walk, p)
			if err != nil {
				return err
			}
			out = append(out, upload{p, path.Join(prefix, root, filepath.ToSlash(rel)), info.Size()})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no file to upload under %s", strings.Join(args, ", "))
	}
	return out, nil
}
