package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/botplatform/botplatform/internal/botarchive"
)

// Moving a bot: its archive (exportBot) and importing one (importBot).

func botsExportFlags(fs *flag.FlagSet, e *env) {
	fs.StringVar(&e.opts.output, "o", "", "the archive file to write (required)")
	fs.BoolVar(&e.opts.secrets, "secrets", false, "include the bot's secrets (administrators and owners)")
}

// botsExport downloads a bot's archive and checks it against its manifest
// before it takes the file's name: a cut download leaves nothing behind.
func botsExport(ctx context.Context, e *env, args []string) error {
	if e.opts.output == "" {
		return Usagef("usage: botplatform bots export BOT -o FILE [--secrets]")
	}
	b, err := findBot(ctx, e, args[0])
	if err != nil {
		return err
	}
	q := url.Values{}
	if e.opts.secrets {
		q.Set("secrets", "true")
	}
	resp, err := e.cl.send(ctx, call{method: "POST", path: "/v1/admin/bots/" + esc(b.ID) + "/export", query: q})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	tmp, err := os.CreateTemp(filepath.Dir(e.opts.output), "."+filepath.Base(e.opts.output)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, resp.Body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("downloading the archive: %w", err)
	}
	m, err := botarchive.Verify(tmp.Name())
	if err != nil {
		return fmt.Errorf("the downloaded archive is incomplete (nothing was written): %w", err)
	}
	if err := os.Rename(tmp.Name(), e.opts.output); err != nil {
		return err
	}
	if e.json {
		return e.printJSON(m)
	}
	fmt.Fprintf(e.Out, "exported bot %s (%s) to %s: %s\n", b.Name, b.ID, e.opts.output, counts(m.Counts))
	return nil
}

func botsImportFlags(fs *flag.FlagSet, e *env) {
	fs.StringVar(&e.opts.name, "name", "", "the new bot's name (default: the archived bot's)")
}

// botsImport sends an archive to the server, streamed from the file.
func botsImport(ctx context.Context, e *env, args []string) error {
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	q := url.Values{}
	if e.opts.name != "" {
		q.Set("name", e.opts.name)
	}
	var res botarchive.Result
	if err := e.cl.do(ctx, call{method: "POST", path: "/v1/admin/bots/import", query: q, content: f, contentLength: st.Size(), out: &res}); err != nil {
		return err
	}
	if e.json {
		return e.printJSON(res)
	}
	what := "imported as new bot"
	if !res.Created {
		what = "completed bot"
	}
	fmt.Fprintf(e.Out, "%s %s (%s) from bot %s: added %s\n", what, res.Name, res.BotID, res.Source.BotID, counts(res.Added))
	return nil
}

// counts names how many rows of each kind there are, in archive order.
func counts(n map[string]int) string {
	var parts []string
	for _, k := range []string{"versions", "users", "conversations", "messages", "states", "codeStates", "workflows", "files", "passages", "contents"} {
		parts = append(parts, fmt.Sprintf("%d %s", n[k], k))
	}
	return strings.Join(parts, ", ")
}
