package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
)

// userPath is the Admin API path of a bot's chat user.
func userPath(botID, userID string) string {
	return "/v1/admin/bots/" + esc(botID) + "/users/" + esc(userID)
}

// usersExport prints everything stored about a chat user, as JSON.
func usersExport(ctx context.Context, e *env, args []string) error {
	b, err := findBot(ctx, e, args[0])
	if err != nil {
		return err
	}
	var out json.RawMessage
	if err := e.cl.do(ctx, call{method: "GET", path: userPath(b.ID, args[1]) + "/export", out: &out}); err != nil {
		return err
	}
	return e.printJSON(out)
}

func usersEraseFlags(fs *flag.FlagSet, e *env) {
	fs.BoolVar(&e.opts.yes, "yes", false, "erase without asking (required when stdin is not a terminal)")
}

// usersErase erases a chat user and everything stored about them, once
// confirmed: by --yes, or on a terminal by typing the user's id.
func usersErase(ctx context.Context, e *env, args []string) error {
	b, err := findBot(ctx, e, args[0])
	if err != nil {
		return err
	}
	user := args[1]
	if !e.opts.yes {
		if !isTerminal(e.In) {
			return Usagef("users erase: stdin is not a terminal; pass --yes to erase user %s of bot %s", user, b.Name)
		}
		fmt.Fprintf(e.Err, "Erase user %s of bot %s (%s) and everything stored about them? This cannot be undone.\nType the user id to confirm: ", user, b.Name, b.ID)
		line, _ := bufio.NewReader(e.In).ReadString('\n')
		if strings.TrimSpace(line) != user {
			return fmt.Errorf("not confirmed: nothing was erased")
		}
	}
	var resp struct {
		Erased map[string]int `json:"erased"`
	}
	if err := e.cl.do(ctx, call{method: "DELETE", path: userPath(b.ID, user), body: struct{}{}, out: &resp}); err != nil {
		return err
	}
	if e.json {
		return e.printJSON(resp)
	}
	n := resp.Erased
	fmt.Fprintf(e.Out, "erased user %s of bot %s (%s): %d conversations, %d messages, %d chat events, %d states, %d workflows, %d events, %d files, %d log lines\n",
		user, b.Name, b.ID, n["conversations"], n["messages"], n["chatEvents"], n["states"], n["workflows"], n["events"], n["files"], n["logs"])
	return nil
}
