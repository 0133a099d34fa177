// Command botplatform is the bot platform server: `serve` runs every API in
// one process, `migrate` prepares the database, `token` issues an access
// token, `openapi` prints the API's OpenAPI document, `version` prints the
// version.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/botplatform/botplatform/cmd/botplatform/cli"
	"github.com/botplatform/botplatform/internal/botruntime"
	"github.com/botplatform/botplatform/internal/indexing/lexicon"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := exitCode(run(ctx, os.Args[1:], os.Stdout, os.Stderr), os.Stderr)
	stop()
	os.Exit(code)
}

// exitCode reports err on stderr and returns the process's exit status: 0
// without an error (or for -h), 2 for a command line that cannot run (usage), 1 for any
// other error.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) { // -h: the usage is printed
		return 0
	}
	fmt.Fprintln(stderr, "botplatform:", err)
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) {
		return coded.ExitCode()
	}
	return 1
}

const usage = `botplatform: a self-hosted bot platform server

Usage:
  botplatform serve   [flags]   run the server (botplatform serve -h lists the flags)
  botplatform migrate [flags]   apply database migrations and exit
  botplatform token   [flags] --email EMAIL [--note NOTE]
                                print a new personal access token for that account
  botplatform openapi [flags]   print the OpenAPI document that serve, given the same
                                flags, answers at /openapi.json
  botplatform backup  --to DIR|s3://BUCKET/PREFIX [--data DIR]
                                snapshot a data directory (database and file contents), its server running
  botplatform restore --from DIR|s3://BUCKET/PREFIX --data DIR
                                check a backup, then make a new data directory of it
  botplatform migrate-data --from DATA_DIR --to-database postgres://… --to-blob s3://BUCKET/PREFIX
                                copy a stopped embedded install into PostgreSQL and a bucket, checked
  botplatform version           print the version
  botplatform licenses          print the licences of the data built into the binary
`

// run is main without the process: tests call it with their own context
// and writers.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage+cli.Usage)
		return cli.Usagef("missing command")
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr)
	case "migrate":
		return migrate(ctx, args[1:], stdout, stderr)
	case "token":
		return issueToken(ctx, args[1:], stdout, stderr)
	case "backup":
		return backupData(ctx, args[1:], stdout, stderr)
	case "restore":
		return restoreData(ctx, args[1:], stdout, stderr)
	case "migrate-data":
		return migrateData(ctx, args[1:], stdout, stderr)
	case "openapi":
		return printOpenAPI(ctx, args[1:], stdout, stderr)
	case "bot-vm": // not for users: the process the server runs bot code in
		return botruntime.Process(args[1:], os.Stdin, os.Stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "botplatform", version)
		return nil
	case "licenses":
		fmt.Fprint(stdout, lexicon.Notice)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage+cli.Usage)
		return nil
	}
	if cli.Commands[args[0]] {
		return cli.Run(ctx, args, cli.IO{In: os.Stdin, Out: stdout, Err: stderr})
	}
	fmt.Fprint(stderr, usage+cli.Usage)
	return cli.Usagef("unknown command %q", args[0])
}
