package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
)

// version is a bot version as listBotVersions shows it.
type version struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	CreatedAt   string `json:"createdAt"`
	CreatedBy   string `json:"createdBy"`
}

func botVersions(ctx context.Context, e *env, botID string) ([]version, error) {
	var resp struct {
		Versions []version `json:"versions"`
	}
	err := e.cl.do(ctx, call{method: "GET", path: "/v1/admin/bots/" + esc(botID) + "/versions", out: &resp})
	return resp.Versions, err
}

func botsVersions(ctx context.Context, e *env, args []string) error {
	b, err := findBot(ctx, e, args[0])
	if err != nil {
		return err
	}
	vs, err := botVersions(ctx, e, b.ID)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(map[string]any{"versions": vs})
	}
	tw := tabwriter.NewWriter(e.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tCREATED\tDESCRIPTION")
	for _, v := range vs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.ID, v.Name, v.CreatedAt, v.Description)
	}
	return tw.Flush()
}

func botsSaveFlags(fs *flag.FlagSet, e *env) {
	fs.StringVar(&e.opts.description, "description", "", "what the version is")
}

func botsSave(ctx context.Context, e *env, args []string) error {
	b, err := findBot(ctx, e, args[0])
	if err != nil {
		return err
	}
	var resp struct {
		Version version `json:"version"`
	}
	body := map[string]any{"name": args[1], "description": e.opts.description}
	if err := e.cl.do(ctx, call{method: "POST", path: "/v1/admin/bots/" + esc(b.ID) + "/versions", body: body, out: &resp}); err != nil {
		return err
	}
	if e.json {
		return e.printJSON(resp)
	}
	fmt.Fprintf(e.Out, "saved bot %s (%s) as version %s (%s)\n", b.Name, b.ID, resp.Version.Name, resp.Version.ID)
	return nil
}

// botsRollback deploys a version of the bot, named by id or by name.
func botsRollback(ctx context.Context, e *env, args []string) error {
	b, err := findBot(ctx, e, args[0])
	if err != nil {
		return err
	}
	vs, err := botVersions(ctx, e, b.ID)
	if err != nil {
		return err
	}
	var match []version
	for _, v := range vs {
		if v.ID == args[1] || v.Name == args[1] {
			match = append(match, v)
		}
	}
	switch {
	case len(match) == 0:
		return fmt.Errorf("bot %s has no version with the id or the name %q (botplatform bots versions %s lists them)", b.Name, args[1], args[0])
	case len(match) > 1:
		ids := make([]string, len(match))
		for i, v := range match {
			ids[i] = v.ID
		}
		return fmt.Errorf("%d versions are named %q: give the id of one (%s)", len(match), args[1], strings.Join(ids, ", "))
	}
	v := match[0]
	if err := e.cl.do(ctx, call{method: "POST", path: "/v1/admin/bots/" + esc(b.ID) + "/versions/deploy", body: map[string]any{"versionId": v.ID}}); err != nil {
		return err
	}
	if e.json {
		return e.printJSON(map[string]any{"version": v})
	}
	fmt.Fprintf(e.Out, "bot %s (%s) now runs version %s (%s)\n", b.Name, b.ID, v.Name, v.ID)
	return nil
}
