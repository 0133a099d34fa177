package cli

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"strings"
)

func botsWebchatFlags(fs *flag.FlagSet, e *env) {
	fs.StringVar(&e.opts.kind, "type", "preconfigured", "the embed code: preconfigured, configurable, fullscreen or sharableUrl")
	fs.StringVar(&e.opts.widget, "widget", "botplatform", "the chat the code shows: botplatform (this server's widget) or official (the official web chat)")
	fs.StringVar(&e.opts.origins, "allow", "", "first set the origins allowed to use the bot's chat from a browser: comma-separated (https://shop.example.com), * for any, none for none")
}

// botsWebchat prints the embed code of the bot's chat widget
// (getBotWebchat), after setting its allowed origins when asked.
func botsWebchat(ctx context.Context, e *env, args []string) error {
	b, err := findBot(ctx, e, args[0])
	if err != nil {
		return err
	}
	var origins []string
	if e.opts.origins != "" {
		origins = []string{}
		if e.opts.origins != "none" {
			for o := range strings.SplitSeq(e.opts.origins, ",") {
				if o = strings.TrimSpace(o); o != "" {
					origins = append(origins, o)
				}
			}
		}
		// The chat configuration is replaced as a whole; the server keeps
		// its encryption key.
		body := map[string]any{"integrations": map[string]any{"chat": map[string]any{"configuration": map[string]any{"allowedOrigins": origins}}}}
		var resp struct {
			Bot struct {
				Integrations map[string]struct {
					Configuration struct {
						AllowedOrigins []string `json:"allowedOrigins"`
					} `json:"configuration"`
				} `json:"integrations"`
			} `json:"bot"`
		}
		if err := e.cl.do(ctx, call{method: "PUT", path: "/v1/admin/bots/" + esc(b.ID), body: body, out: &resp}); err != nil {
			return err
		}
		origins = resp.Bot.Integrations["chat"].Configuration.AllowedOrigins
	}
	var out struct {
		Code           string   `json:"code"`
		AllowedOrigins []string `json:"allowedOrigins,omitempty"`
	}
	q := url.Values{"type": {e.opts.kind}, "widget": {e.opts.widget}}
	if err := e.cl.do(ctx, call{method: "GET", path: "/v1/admin/bots/" + esc(b.ID) + "/webchat", query: q, out: &out}); err != nil {
		return err
	}
	out.AllowedOrigins = origins
	if e.json {
		return e.printJSON(out)
	}
	if origins != nil {
		shown := strings.Join(origins, ", ")
		if shown == "" {
			shown = "none (only this server's own pages)"
		}
		fmt.Fprintf(e.Err, "allowed origins of bot %s: %s\n", b.Name, shown)
	}
	fmt.Fprint(e.Out, strings.TrimSuffix(out.Code, "\n")+"\n")
	return nil
}
