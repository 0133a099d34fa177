package cli

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// bot is what the commands need of a bot.
type bot struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	CreatedAt    string `json:"createdAt"`
	UpdatedAt    string `json:"updatedAt"`
	DeployedAt   string `json:"deployedAt,omitempty"`
	URL          string `json:"url,omitempty"` // where a bot written with the SDK is served (developers see it)
	Dev          bool   `json:"dev"`           // a `bp dev` bot, served down a tunnel
	Integrations map[string]struct {
		WebhookURL string `json:"webhookUrl"`
	} `json:"integrations,omitempty"`
}

// chatURL is the base URL of the bot's Chat API.
func (b bot) chatURL() string { return b.Integrations["chat"].WebhookURL }

// allBots lists every bot of the workspace, page after page.
func allBots(ctx context.Context, e *env) ([]bot, error) {
	var all []bot
	q := url.Values{"pageSize": {"100"}}
	for {
		var resp struct {
			Bots []bot `json:"bots"`
			Meta struct {
				NextToken string `json:"nextToken"`
			} `json:"meta"`
		}
		if err := e.cl.do(ctx, call{method: "GET", path: "/v1/admin/bots", query: q, out: &resp}); err != nil {
			return nil, err
		}
		all = append(all, resp.Bots...)
		if resp.Meta.NextToken == "" {
			return all, nil
		}
		q.Set("nextToken", resp.Meta.NextToken)
	}
}

// findBot finds a bot by id or by name.
func findBot(ctx context.Context, e *env, ref string) (bot, error) {
	var resp struct{ Bot bot }
	if strings.HasPrefix(ref, "bot_") {
		err := e.cl.do(ctx, call{method: "GET", path: "/v1/admin/bots/" + esc(ref), out: &resp})
		if err == nil || !isNotFound(err) {
			return resp.Bot, err
		}
	}
	bots, err := allBots(ctx, e)
	if err != nil {
		return bot{}, err
	}
	var ids []string
	for _, b := range bots {
		if b.Name == ref {
			ids = append(ids, b.ID)
		}
	}
	switch len(ids) {
	case 0:
		return bot{}, fmt.Errorf("no bot has the id or the name %q (botplatform bots ls lists them)", ref)
	case 1:
		err := e.cl.do(ctx, call{method: "GET", path: "/v1/admin/bots/" + esc(ids[0]), out: &resp})
		return resp.Bot, err
	}
	return bot{}, fmt.Errorf("%d bots are named %q: give the id of one (%s)", len(ids), ref, strings.Join(ids, ", "))
}

func botsList(ctx context.Context, e *env, _ []string) error {
	bots, err := allBots(ctx, e)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(map[string]any{"bots": bots})
	}
	tw := tabwriter.NewWriter(e.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tUPDATED")
	for _, b := range bots {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", b.ID, b.Name, b.UpdatedAt)
	}
	return tw.Flush()
}

func botsCreateFlags(fs *flag.FlagSet, e *env) {
	fs.StringVar(&e.opts.code, "code", "", "JavaScript file of the bot's code")
}

func botsCreate(ctx context.Context, e *env, args []string) error {
	body := map[string]any{"name": args[0]}
	if e.opts.code != "" {
		code, err := os.ReadFile(e.opts.code)
		if err != nil {
			return err
		}
		body["code"] = string(code)
	}
	var resp struct{ Bot bot }
	if err := e.cl.do(ctx, call{method: "POST", path: "/v1/admin/bots", body: body, out: &resp}); err != nil {
		return err
	}
	if e.json {
		return e.printJSON(resp)
	}
	fmt.Fprintf(e.Out, "created bot %s (%s)\nchat: %s\n", resp.Bot.Name, resp.Bot.ID, resp.Bot.chatURL())
	return nil
}

func botsDeploy(ctx context.Context, e *env, args []string) error {
	code, err := os.ReadFile(args[1])
	if err != nil {
		return err
	}
	b, err := findBot(ctx, e, args[0])
	if err != nil {
		return err
	}
	var resp struct{ Bot bot }
	if err := e.cl.do(ctx, call{method: "PUT", path: "/v1/admin/bots/" + esc(b.ID), body: map[string]any{"code": string(code)}, out: &resp}); err != nil {
		return err
	}
	if e.json {
		return e.printJSON(resp)
	}
	fmt.Fprintf(e.Out, "deployed %s to bot %s (%s)\n", args[1], b.Name, b.ID)
	return nil
}

func botsRemove(ctx context.Context, e *env, args []string) error {
	b, err := findBot(ctx, e, args[0])
	if err != nil {
		return err
	}
	if err := e.cl.do(ctx, call{method: "DELETE", path: "/v1/admin/bots/" + esc(b.ID), body: struct{}{}}); err != nil {
		return err
	}
	if !e.json {
		fmt.Fprintf(e.Out, "deleted bot %s (%s)\n", b.Name, b.ID)
	}
	return nil
}

func botsLogsFlags(fs *flag.FlagSet, e *env) {
	fs.BoolVar(&e.opts.follow, "f", false, "follow: print new lines as the bot logs them, until interrupted")
	fs.StringVar(&e.opts.since, "since", "1h", "how far back to start (a Go duration: 30m, 24h)")
	fs.StringVar(&e.opts.level, "level", "", "only this level: debug, info, warn, error")
}

// logLine is one line of a bot's logs.
type logLine struct {
	Timestamp      string `json:"timestamp"`
	Level          string `json:"level"`
	Message        string `json:"message"`
	ConversationID string `json:"conversationId,omitempty"`
	UserID         string `json:"userId,omitempty"`
	WorkflowID     string `json:"workflowId,omitempty"`
}

// followEvery is how often `bots logs -f` asks for new lines.
const followEvery = time.Second

func botsLogs(ctx context.Context, e *env, args []string) error {
	since, err := time.ParseDuration(e.opts.since)
	if err != nil || since < 0 {
		return Usagef("--since: want a duration such as 30m or 24h, got %q", e.opts.since)
	}
	b, err := findBot(ctx, e, args[0])
	if err != nil {
		return err
	}
	start := time.Now().Add(-since).UTC().Format(time.RFC3339Nano)
	// Lines at the last timestamp seen, which the next ask repeats (its
	// start is inclusive).
	seen := map[logLine]bool{}
	for {
		lines, err := botLogs(ctx, e, b.ID, start)
		if err != nil {
			return err
		}
		for _, l := range lines {
			if seen[l] {
				continue
			}
			if l.Timestamp != start {
				start, seen = l.Timestamp, map[logLine]bool{}
			}
			seen[l] = true
			if e.json {
				if err := e.printJSON(l); err != nil {
					return err
				}
				continue
			}
			where := ""
			if l.ConversationID != "" {
				where = " [" + l.ConversationID + "]"
			}
			fmt.Fprintf(e.Out, "%s %-5s%s %s\n", l.Timestamp, strings.ToUpper(l.Level), where, l.Message)
		}
		if !e.opts.follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil // interrupted: following ends without an error
		case <-time.After(followEvery):
		}
	}
}

// botLogs reads every line logged since start, page after page.
func botLogs(ctx context.Context, e *env, botID, start string) ([]logLine, error) {
	q := url.Values{"timeStart": {start}}
	if e.opts.level != "" {
		q.Set("level", e.opts.level)
	}
	var all []logLine
	for {
		var resp struct {
			Logs      []logLine `json:"logs"`
			NextToken string    `json:"nextToken"`
		}
		if err := e.cl.do(ctx, call{method: "GET", path: "/v1/admin/bots/" + esc(botID) + "/logs", query: q, out: &resp}); err != nil {
			return nil, err
		}
		all = append(all, resp.Logs...)
		if resp.NextToken == "" {
			return all, nil
		}
		q.Set("nextToken", resp.NextToken)
	}
}
