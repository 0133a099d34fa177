// Package cli is the command line client of a running server: bots, files,
// search, chat and chat users' data, through the same public APIs as any
// other client.
package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"
)

// IO is what a command reads and writes; Getenv reads the environment.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
	Getenv   func(string) string
}

// UsageError is a command line the command cannot run: exit status 2.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// ExitCode is the process's exit status for the error.
func (e *UsageError) ExitCode() int { return 2 }

func Usagef(format string, args ...any) error { return &UsageError{fmt.Sprintf(format, args...)} }

// Usage lists the client's commands, for the binary's help.
const Usage = `
Client commands (talk to a running server; see docs/cli.md):
  botplatform bots ls | create NAME [--code FILE.js] | deploy BOT FILE.js | logs BOT [-f] | rm BOT
  botplatform bots versions BOT | save BOT NAME [--description TEXT] | rollback BOT VERSION
  botplatform bots export BOT -o FILE [--secrets] | import FILE [--name NAME]
  botplatform bots webchat BOT [--type preconfigured] [--widget official] [--allow ORIGIN,…]   a website's chat widget
  botplatform files put BOT PATH… [--index] [--tag k=v]… [--wait] [--prefix P]
  botplatform files ls BOT [--tag k=v]… | get BOT KEY [-o PATH] | rm BOT KEY | search BOT QUERY [--limit N]
  botplatform chat BOT
  botplatform users export BOT USER | erase BOT USER [--yes]
  botplatform audit [--limit N]    the workspace's audit log, newest first
  Flags of every client command: --url, --token, --workspace, --data DIR (where bootstrap.json is), --json
`

// Commands are the first words Run serves.
var Commands = map[string]bool{"bots": true, "files": true, "chat": true, "users": true, "audit": true}

// Run runs a client command; args start with its first word ("bots").
func Run(ctx context.Context, args []string, sio IO) error {
	if sio.Getenv == nil {
		sio.Getenv = os.Getenv
	}
	word, rest := args[0], args[1:]
	if _, single := commands[word]; !single {
		if len(args) < 2 {
			return Usagef("%s: missing sub-command\n%s", args[0], groupUsage(args[0]))
		}
		if isHelp(args[1]) {
			fmt.Fprint(sio.Err, groupUsage(args[0])) // where the flag package writes a command's -h

			return flag.ErrHelp
		}
		word, rest = args[0]+" "+args[1], args[2:]
	}
	cmd, ok := commands[word]
	if !ok {
		return Usagef("unknown command %q\n%s", word, groupUsage(args[0]))
	}
	e := &env{IO: sio}
	fs := flag.NewFlagSet(word, flag.ContinueOnError)
	fs.SetOutput(sio.Err)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: botplatform %s %s\n\n%s\n\nFlags:\n", word, cmd.args, cmd.what)
		fs.PrintDefaults()
	}
	fs.StringVar(&e.url, "url", "", "server URL (BOTPLATFORM_URL; default: bootstrap.json's, or http://127.0.0.1:8080)")
	fs.StringVar(&e.token, "token", "", "access token (BOTPLATFORM_TOKEN; default: bootstrap.json's)")
	fs.StringVar(&e.workspace, "workspace", "", "workspace id (BOTPLATFORM_WORKSPACE_ID; default: bootstrap.json's)")
	fs.StringVar(&e.data, "data", "", "data directory holding bootstrap.json (BOTPLATFORM_DATA; default ./data)")
	fs.BoolVar(&e.json, "json", false, "print JSON, for scripts")
	cmd.flags(fs, e)
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &UsageError{err.Error()}
	}
	if len(pos) < cmd.min || cmd.max >= 0 && len(pos) > cmd.max {
		return Usagef("usage: botplatform %s %s", word, cmd.args)
	}
	if err := e.connect(); err != nil {
		return err
	}
	return cmd.run(ctx, e, pos)
}

// command is one leaf command: its positional arguments and flags.
type command struct {
	args     string // for the usage line
	what     string // what it does, for its help
	min, max int    // positional arguments; max -1: any number
	flags    func(*flag.FlagSet, *env)
	run      func(context.Context, *env, []string) error
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}

// groupUsage lists the commands whose first word is group, each with what
// it does; the whole client's usage for a word that is no group.
func groupUsage(group string) string {
	var names []string
	for name := range commands {
		if strings.HasPrefix(name, group+" ") {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return strings.TrimPrefix(Usage, "\n")
	}
	slices.Sort(names)
	var b strings.Builder
	fmt.Fprintf(&b, "Commands of botplatform %s (`botplatform %s COMMAND --help` for one; docs/cli.md):\n", group, group)
	for _, name := range names {
		c := commands[name]
		fmt.Fprintf(&b, "  %s\n      %s\n", strings.TrimSpace("botplatform "+name+" "+c.args), c.what)
	}
	b.WriteString("  Flags of every client command: --url, --token, --workspace, --data DIR (where bootstrap.json is), --json\n")
	return b.String()
}

func noFlags(*flag.FlagSet, *env) {}

var commands map[string]command

func init() {
	commands = map[string]command{
		"bots ls":       {"", "lists the workspace's bots", 0, 0, noFlags, botsList},
		"bots create":   {"NAME [--code FILE.js]", "creates a bot, with the JavaScript code of FILE.js if given", 1, 1, botsCreateFlags, botsCreate},
		"bots deploy":   {"BOT FILE.js", "deploys FILE.js as the bot's code (embedded VM code, or a Node bundle)", 2, 2, noFlags, botsDeploy},
		"bots logs":     {"BOT [-f] [--since DURATION] [--level LEVEL]", "prints the bot's logs; -f follows them", 1, 1, botsLogsFlags, botsLogs},
		"bots rm":       {"BOT", "deletes the bot and its data", 1, 1, noFlags, botsRemove},
		"bots versions": {"BOT", "lists the bot's saved versions", 1, 1, noFlags, botsVersions},
		"bots save":     {"BOT NAME [--description TEXT]", "saves the bot's code and settings as a named version", 2, 2, botsSaveFlags, botsSave},
		"bots rollback": {"BOT VERSION", "deploys a saved version again", 2, 2, noFlags, botsRollback},
		"bots export":   {"BOT -o FILE [--secrets]", "writes the bot and its data to an archive", 1, 1, botsExportFlags, botsExport},
		"bots import":   {"FILE [--name NAME]", "creates a bot from an archive bots export wrote", 1, 1, botsImportFlags, botsImport},
		"bots webchat":  {"BOT [--type preconfigured] [--widget official] [--allow ORIGIN,…]", "prints the embed code of the bot's chat widget for websites", 1, 1, botsWebchatFlags, botsWebchat},
		"files put":     {"BOT PATH… [--index] [--tag k=v]… [--wait] [--prefix P]", "uploads files or folders for the bot; --index makes them searchable", 2, -1, filesPutFlags, filesPut},
		"files ls":      {"BOT [--tag k=v]…", "lists the bot's files", 1, 1, filesListFlags, filesList},
		"files get":     {"BOT KEY [-o PATH]", "downloads a file", 2, 2, filesGetFlags, filesGet},
		"files rm":      {"BOT KEY", "deletes a file", 2, 2, noFlags, filesRemove},
		"files search":  {"BOT QUERY [--limit N] [--tag k=v]…", "searches the bot's indexed files", 2, 2, filesSearchFlags, filesSearch},
		"chat":          {"BOT", "chats with the bot: lines typed (or piped) are sent, its replies printed", 1, 1, chatFlags, chat},
		"audit":         {"[--limit N]", "prints the workspace's audit log, newest first", 0, 0, auditFlags, auditList},
		"users export":  {"BOT USER", "prints what is stored about a chat user (a privacy export)", 2, 2, noFlags, usersExport},
		"users erase":   {"BOT USER [--yes]", "erases a chat user and their data", 2, 2, usersEraseFlags, usersErase},
	}
}

// parseInterspersed parses flags anywhere among the positional arguments
// (`files put bot docs --index`); "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// env is a command's connection and options.
type env struct {
	IO
	url, token, workspace, data string
	json                        bool
	opts                        options
	cl                          *client
}

// options are the leaf commands' own flags.
type options struct {
	code, since, level, prefix, output string
	kind, origins, widget              string // bots webchat
	name                               string
	description                        string
	follow, index, wait, yes, secrets  bool
	tags                               tagFlags
	limit                              int
	timeout                            time.Duration
}

// bootstrap is data/bootstrap.json, written by a server's first start.
type bootstrap struct {
	Token       string `json:"token"`
	WorkspaceID string `json:"workspaceId"`
	APIURL      string `json:"apiUrl"`
}

// connect settles the server URL and credentials: flags, then the
// environment, then bootstrap.json.
func (e *env) connect() error {
	var boot bootstrap
	dir := cmp.Or(e.data, e.Getenv("BOTPLATFORM_DATA"), "data")
	if b, err := os.ReadFile(filepath.Join(dir, "bootstrap.json")); err == nil {
		if err := json.Unmarshal(b, &boot); err != nil {
			return fmt.Errorf("%s: %v", filepath.Join(dir, "bootstrap.json"), err)
		}
	}
	base := cmp.Or(e.url, e.Getenv("BOTPLATFORM_URL"), boot.APIURL, "http://127.0.0.1:8080")
	token := cmp.Or(e.token, e.Getenv("BOTPLATFORM_TOKEN"), boot.Token)
	if token == "" {
		return Usagef("no access token: pass --token, set BOTPLATFORM_TOKEN, or run where %s exists", filepath.Join(dir, "bootstrap.json"))
	}
	e.cl = &client{
		base: strings.TrimRight(base, "/"), token: token,
		workspaceID: cmp.Or(e.workspace, e.Getenv("BOTPLATFORM_WORKSPACE_ID"), boot.WorkspaceID),
		http:        &http.Client{}, userAgent: "botplatform-cli",
		notify: func(msg string) { fmt.Fprintln(e.Err, "botplatform:", msg) },
	}
	return nil
}

// printJSON prints v indented, for --json.
func (e *env) printJSON(v any) error {
	enc := json.NewEncoder(e.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// isTerminal tells whether w is a terminal (progress bars and spinners are
// drawn only there, never into a pipe or a file).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// tagFlags collects repeated --tag k=v flags.
type tagFlags map[string]string

func (t *tagFlags) String() string { return "" }

func (t *tagFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	if *t == nil {
		*t = tagFlags{}
	}
	(*t)[k] = v
	return nil
}
