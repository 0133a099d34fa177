package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/schollz/progressbar/v3"
)

func filesPutFlags(fs *flag.FlagSet, e *env) {
	fs.BoolVar(&e.opts.index, "index", false, "index the files for search")
	fs.Var(&e.opts.tags, "tag", "tag every file (KEY=VALUE; repeat for several)")
	fs.BoolVar(&e.opts.wait, "wait", false, "wait until indexing ends, then print each file's status")
	fs.StringVar(&e.opts.prefix, "prefix", "", "store the files under this key prefix (docs/)")
	fs.DurationVar(&e.opts.timeout, "timeout", 10*time.Minute, "with --wait: how long to wait at most")
}

// pollEvery is how often `files put --wait` looks at the files' status.
const pollEvery = 500 * time.Millisecond

func filesPut(ctx context.Context, e *env, args []string) error {
	ups, err := uploads(args[1:], e.opts.prefix)
	if err != nil {
		return err
	}
	b, err := findBot(ctx, e, args[0])
	if err != nil {
		return err
	}
	stored := make([]file, 0, len(ups))
	for _, u := range ups {
		f, err := putFile(ctx, e, b.ID, u)
		if err != nil {
			return fmt.Errorf("%s: %w", u.path, err)
		}
		stored = append(stored, f)
	}
	if e.opts.wait {
		if stored, err = waitDone(ctx, e, b.ID, stored); err != nil {
			return err
		}
	}
	if e.json {
		if err := e.printJSON(map[string]any{"files": stored}); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(e.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY\tSIZE\tSTATUS\tID")
		for _, f := range stored {
			reason := ""
			if f.FailedStatusReason != "" {
				reason = " (" + f.FailedStatusReason + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s%s\t%s\n", f.Key, humanize.IBytes(uint64(*f.Size)), f.Status, reason, f.ID)
		}
		tw.Flush()
	}
	var failed []string
	for _, f := range stored {
		if f.failed() {
			failed = append(failed, f.Key)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d files failed: %s", len(failed), len(stored), strings.Join(failed, ", "))
	}
	return nil
}

// putFile stores one file: upsertFile, then its content to the upload URL,
// with a progress bar on a terminal.
func putFile(ctx context.Context, e *env, botID string, u upload) (file, error) {
	body := map[string]any{"key": u.key, "size": u.size, "index": e.opts.index}
	if len(e.opts.tags) > 0 {
		body["tags"] = e.opts.tags
	}
	var resp struct{ File file }
	if err := e.cl.do(ctx, call{method: "PUT", path: "/v1/files", botID: botID, body: body, out: &resp}); err != nil {
		return file{}, err
	}
	src, err := os.Open(u.path)
	if err != nil {
		return file{}, err
	}
	defer src.Close()
	var content io.Reader = src
	if isTerminal(e.Err) {
		bar := progressbar.NewOptions64(u.size,
			progressbar.OptionSetWriter(e.Err), progressbar.OptionSetDescription(u.key),
			progressbar.OptionShowBytes(true), progressbar.OptionShowTotalBytes(true), progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(20), progressbar.OptionThrottle(65*time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(e.Err) }), progressbar.OptionSetRenderBlankState(true))
		r := progressbar.NewReader(src, bar)
		content = &r
		defer bar.Finish()
	}
	put := call{method: "PUT", path: resp.File.UploadURL, anonymous: true, content: content, contentLength: u.size}
	if err := e.cl.do(ctx, put); err != nil {
		return file{}, err
	}
	if !isTerminal(e.Err) {
		fmt.Fprintf(e.Err, "uploaded %s (%s)\n", u.key, humanize.IBytes(uint64(u.size)))
	}
	var got struct{ File file }
	err = e.cl.do(ctx, call{method: "GET", path: "/v1/files/" + esc(resp.File.ID), botID: botID, out: &got})
	return got.File, err
}

// waitDone follows the files until each is done (indexed, or failed),
// with a spinner on a terminal.
func waitDone(ctx context.Context, e *env, botID string, files []file) ([]file, error) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	var spin *progressbar.ProgressBar
	if isTerminal(e.Err) {
		spin = progressbar.NewOptions(-1, progressbar.OptionSetWriter(e.Err), progressbar.OptionSpinnerType(14),
			progressbar.OptionClearOnFinish(), progressbar.OptionSetElapsedTime(true))
		defer spin.Finish()
	}
	byID := make(map[string]int, len(files))
	for i, f := range files {
		byID[f.ID] = i
	}
	for {
		var pending []string
		for _, f := range files {
			if !f.done() {
				pending = append(pending, f.ID)
			}
		}
		if len(pending) == 0 {
			return files, nil
		}
		if spin != nil {
			spin.Describe(fmt.Sprintf("indexing: %d of %d files done", len(files)-len(pending), len(files)))
			_ = spin.Add(1)
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return files, fmt.Errorf("%d files still not indexed after %s", len(pending), e.opts.timeout)
			}
			return files, ctx.Err()
		case <-time.After(pollEvery):
		}
		// At most 50 ids a listFiles call (compat-notes §2.2).
		for len(pending) > 0 {
			n := min(50, len(pending))
			var resp struct{ Files []file }
			q := url.Values{"ids": pending[:n]}
			if err := e.cl.do(ctx, call{method: "GET", path: "/v1/files", query: q, botID: botID, out: &resp}); err != nil {
				if ctx.Err() != nil {
					break // reported above, at the next turn
				}
				return files, err
			}
			for _, f := range resp.Files {
				files[byID[f.ID]] = f
			}
			pending = pending[n:]
		}
	}
}
