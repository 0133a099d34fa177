package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Bot is a bot as the executors need it, read once per version.
type Bot struct {
	platform.Bot
	// Version changes with every change of the bot.
	Version string
	// Timeout is an invocation's deadline: the bot's maxExecutionTime,
	// within the server's bounds.
	Timeout time.Duration

	updated time.Time
	exec    Executor // nil: nothing runs the bot's code
}

// bot returns the bot's current version: one cheap query tells whether the
// cached copy is current, so new code takes effect from the next event.
func (d *Dispatcher) bot(ctx context.Context, botID string) (*Bot, error) {
	ws, updated, err := d.store.BotVersion(ctx, botID)
	if err != nil {
		return nil, err
	}
	d.botsMu.Lock()
	b, ok := d.bots[botID]
	d.botsMu.Unlock()
	if ok && b.updated.Equal(updated) {
		return b, nil
	}
	bot, err := d.store.GetBot(ctx, ws, botID)
	if err != nil {
		return nil, err
	}
	b = &Bot{Bot: bot, updated: bot.UpdatedAt, Version: strconv.FormatInt(bot.UpdatedAt.UnixMicro(), 10), Timeout: d.cfg.Timeout}
	if t := bot.Spec.MaxExecutionTime; t != nil {
		b.Timeout = min(time.Duration(*t)*time.Second, d.cfg.MaxTimeout)
	}
	for _, e := range d.execs {
		if e.Serves(b) {
			b.exec = e
			break
		}
	}
	d.botsMu.Lock()
	d.bots[botID] = b
	d.botsMu.Unlock()
	return b, nil
}

// CallAction runs one of the bot's actions (bot.action) with input, and
// returns its output. Errors thrown by the action are RuntimeError (400);
// an action the code does not define is ResourceNotFound.
func (d *Dispatcher) CallAction(ctx context.Context, botID, name string, input json.RawMessage) (json.RawMessage, error) {
	b, err := d.bot(ctx, botID)
	if errors.Is(err, platform.ErrNotFound) {
		return nil, platform.NotFound("bot", botID)
	}
	if err != nil {
		return nil, err
	}
	if len(input) == 0 || string(input) == "null" {
		input = json.RawMessage(`{}`)
	}
	if alias, action, ok := strings.Cut(name, ":"); ok {
		return d.integrationAction(ctx, b, alias, action, input)
	}
	if b.exec == nil {
		return nil, platform.Errorf(platform.TypeResourceNotFound, "action %q: bot %q has no code deployed", name, botID)
	}
	return b.exec.Action(ctx, b, name, input)
}

// Integration runs the actions of an integration, which the bots that
// installed it (in) call as "<its alias>:<action>".
type Integration interface {
	Action(ctx context.Context, b *Bot, in platform.BotIntegration, action string, input json.RawMessage) (json.RawMessage, error)
}

// integrationAction runs action of the integration the bot installed
// under alias.
func (d *Dispatcher) integrationAction(ctx context.Context, b *Bot, alias, action string, input json.RawMessage) (json.RawMessage, error) {
	i := slices.IndexFunc(b.Integrations, func(in platform.BotIntegration) bool { return in.Name == alias })
	if i < 0 && strings.Contains(alias, "/") {
		var err error
		if i, err = d.installedAs(ctx, b, alias); err != nil {
			return nil, err
		}
	}
	if i < 0 {
		return nil, platform.Errorf(platform.TypeResourceNotFound, "action %q: the bot has no integration %q", alias+":"+action, alias)
	}
	in := b.Integrations[i]
	if !in.Enabled {
		return nil, platform.Errorf(platform.TypeResourceNotFound, "action %q: the bot's integration %q is disabled", alias+":"+action, alias)
	}
	run := d.cfg.Integrations[in.IntegrationID]
	if run == nil && in.Deployed() {
		run = d.cfg.Deployed
	}
	if run == nil {
		return nil, platform.Errorf(platform.TypeResourceNotFound, "action %q: the %s integration has no actions here", alias+":"+action, in.Name)
	}
	return run.Action(ctx, b, in, action, input)
}

// installedAs finds the installation of the integration named name
// ("<handle>/<name>": the installation's name in getBot, by which code that
// reads the bot's integrations calls it) among those installed under its
// bare name (what installing it by its id names it); -1 if there is none.
func (d *Dispatcher) installedAs(ctx context.Context, b *Bot, name string) (int, error) {
	var ids []string
	for _, in := range b.Integrations {
		if in.Name == path.Base(name) && in.Deployed() {
			ids = append(ids, in.IntegrationID)
		}
	}
	if len(ids) == 0 {
		return -1, nil
	}
	vs, _, err := d.store.ListIntegrations(ctx, store.IntegrationFilter{Page: store.Page{Limit: len(ids)}, IDs: ids})
	if err != nil {
		return -1, err
	}
	for _, v := range vs {
		if v.Name == name {
			return slices.IndexFunc(b.Integrations, func(in platform.BotIntegration) bool { return in.IntegrationID == v.ID }), nil
		}
	}
	return -1, nil
}

// idleBots is how long an executor keeps what it holds for a bot (a
// process) without events.
const idleBots = 10 * time.Minute

// sweep lets the executors close what bots without events for idleBots
// kept (deleted bots among them), and drops the cached bots.
func (d *Dispatcher) sweep(now time.Time) {
	for _, e := range d.execs {
		e.Sweep(now.Add(-idleBots))
	}
	d.botsMu.Lock()
	clear(d.bots) // a cache: reloaded at the next event
	d.botsMu.Unlock()
}
