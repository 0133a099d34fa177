// Package integration runs the code of the integrations workspaces deploy
// (docs/integrations.md): for each bot that installed one, a Node process of
// its own in the bot host, spoken to in the contract of @botpress/sdk's
// integration server (the x-bp-operation headers): register and unregister
// with the installation's webhook URL, actions, webhooks received.
package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/botplatform/botplatform/internal/nodehost"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/sdkbot"
)

// The operations of the contract (header x-bp-operation).
const (
	OpRegister   = "register"
	OpUnregister = "unregister"
	OpAction     = "action_triggered"
	OpWebhook    = "webhook_received"
	OpMessage    = "message_created"
)

// Store is what the runner reads of the database.
type Store interface {
	GetIntegration(ctx context.Context, id string) (platform.Integration, error)
	IntegrationVersion(ctx context.Context, id string) (time.Time, error)
	GetIntegrationByWebhook(ctx context.Context, webhookID string) (platform.BotIntegration, error)
	BotVersion(ctx context.Context, botID string) (workspaceID string, updatedAt time.Time, err error)
	GetBot(ctx context.Context, workspaceID, id string) (platform.Bot, error)
}

// NodeHost runs Node bundles (nodehost.Host).
type NodeHost interface {
	Call(ctx context.Context, b nodehost.Bundle, req nodehost.Request) (nodehost.Response, error)
}

// Keys mints the key an installation's code calls the platform with.
type Keys interface {
	IntegrationKey(ctx context.Context, b platform.Bot, in platform.BotIntegration) (string, error)
}

// HTTP sends the contract's requests to the code a dev integration serves
// at its url (`bp dev`: a tunnel of the server's) under the rules of bots'
// urls (sdkbot.Caller).
type HTTP interface {
	Post(ctx context.Context, owner, url string, h http.Header, body []byte) (sdkbot.Result, error)
}

// Config is what a Runner needs.
type Config struct {
	Node NodeHost // nil: integrations' code does not run here
	HTTP HTTP     // nil: dev integrations are not reached
	Keys Keys
	// APIURL is the base URL the code calls the platform at (BP_API_URL).
	APIURL string
	// WebhookURL is the base of every installation's webhook URL: the
	// server's public URL and /integrations/webhooks.
	WebhookURL string
	// Timeout bounds one call of an integration's code when its version
	// sets no maxExecutionTime.
	Timeout time.Duration
	Log     *slog.Logger
}

// Runner sends the contract's requests to installed integrations' code.
type Runner struct {
	cfg   Config
	store Store

	mu   sync.Mutex
	code map[string]cached // integration version id -> its code and secrets
	// keys caches each installation's key for keyTTL: it derives from the
	// installation and the bot's signing secret (a change is a miss); past
	// keyTTL its row is looked at again (a deleted one is created again).
	keys map[keyFor]cachedKey
	// bots caches the bots read for webhooks and outgoing messages, each
	// as of its update time, which one cheap query checks per use (so a
	// change made on any node is seen at once).
	bots map[string]platform.Bot
}

// maxCachedBots bounds the bots the runner keeps in memory.
const maxCachedBots = 1024

type keyFor struct{ bot, alias, integration, webhook, secret string }

type cachedKey struct {
	key string
	at  time.Time
}

const keyTTL = time.Minute

// maxCachedVersions bounds the integration versions whose code the runner
// keeps in memory.
const maxCachedVersions = 32

type cached struct {
	updated time.Time
	i       platform.Integration
}

// DefaultTimeout bounds a call when neither Config nor the integration
// version says.
const DefaultTimeout = 60 * time.Second

// New returns a Runner.
func New(st Store, cfg Config) *Runner {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	return &Runner{cfg: cfg, store: st, code: map[string]cached{}, keys: map[keyFor]cachedKey{}, bots: map[string]platform.Bot{}}
}

// WebhookURL is where the provider of an installation sends its webhooks.
func (r *Runner) WebhookURL(webhookID string) string { return r.cfg.WebhookURL + "/" + webhookID }

// Answer is what an integration's code answered.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// ErrNotRunning is a call to an integration whose code cannot run here.
var ErrNotRunning = errors.New("this server does not run integrations' code (no Node.js bot host)")

// version returns the integration version in, code included, from the
// cache while it is current.
func (r *Runner) version(ctx context.Context, id string) (platform.Integration, error) {
	updated, err := r.store.IntegrationVersion(ctx, id)
	if err != nil {
		return platform.Integration{}, err
	}
	r.mu.Lock()
	c, ok := r.code[id]
	r.mu.Unlock()
	if ok && c.updated.Equal(updated) {
		return c.i, nil
	}
	i, err := r.store.GetIntegration(ctx, id)
	if err != nil {
		return i, err
	}
	r.mu.Lock()
	if len(r.code) >= maxCachedVersions {
		// Bundles are megabytes: the cache holds a few, and forgets one
		// at random when full (a miss costs one read).
		for old := range r.code {
			delete(r.code, old)
			break
		}
	}
	r.code[id] = cached{i.UpdatedAt, i}
	r.mu.Unlock()
	return i, nil
}

// key is the installation's key (Keys.IntegrationKey), cached.
func (r *Runner) key(ctx context.Context, b platform.Bot, in platform.BotIntegration) (string, error) {
	k := keyFor{b.ID, in.Name, in.IntegrationID, in.WebhookID, b.SigningSecret}
	r.mu.Lock()
	c, ok := r.keys[k]
	r.mu.Unlock()
	if ok && time.Since(c.at) < keyTTL {
		return c.key, nil
	}
	key, err := r.cfg.Keys.IntegrationKey(ctx, b, in)
	if err != nil {
		return "", err
	}
	now := time.Now()
	r.mu.Lock()
	if len(r.keys) >= 4096 { // keys of installations gone, or of old signing secrets
		for old, c := range r.keys {
			if now.Sub(c.at) >= keyTTL {
				delete(r.keys, old)
			}
		}
	}
	r.keys[k] = cachedKey{key, now}
	r.mu.Unlock()
	return key, nil
}

// Send sends one operation to the code of the integration b installed as
// in, and returns its answer whatever its status; an error is a call that
// got no answer (the code does not load, crashed, or ran past its time).
func (r *Runner) Send(ctx context.Context, b platform.Bot, in platform.BotIntegration, op, typ string, body []byte) (Answer, error) {
	i, err := r.version(ctx, in.IntegrationID)
	if errors.Is(err, platform.ErrNotFound) {
		return Answer{}, fmt.Errorf("integration %s version %s was deleted", in.Name, in.Version)
	}
	if err != nil {
		return Answer{}, err
	}
	dev := i.Dev && i.Spec.URL != ""
	switch {
	case dev && r.cfg.HTTP == nil:
		return Answer{}, errors.New("this server does not reach dev integrations")
	case !dev && r.cfg.Node == nil:
		return Answer{}, ErrNotRunning
	case !dev && i.Code == "":
		return Answer{}, fmt.Errorf("integration %s version %s was deployed without code", i.Name, i.Version)
	}
	conf, err := json.Marshal(in.Configuration)
	if err != nil || string(conf) == "null" {
		conf = []byte("{}")
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("x-bot-id", b.ID)
	h.Set("x-bot-user-id", b.ID)
	h.Set("x-integration-id", i.ID)
	h.Set("x-integration-alias", in.Name)
	h.Set("x-webhook-id", in.WebhookID)
	h.Set("x-bp-operation", op)
	h.Set("x-bp-type", typ)
	h.Set("x-bp-configuration", base64.StdEncoding.EncodeToString(conf))
	if in.ConfigurationType != "" {
		h.Set("x-bp-configuration-type", in.ConfigurationType)
	}
	timeout := r.cfg.Timeout
	if i.Spec.MaxExecutionTime != nil {
		timeout = time.Duration(*i.Spec.MaxExecutionTime) * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if dev {
		// `bp dev` serves the code on the developer's machine, with the
		// developer's own credentials.
		res, err := r.cfg.HTTP.Post(cctx, b.ID+"/"+in.Name, i.Spec.URL, h, body)
		if err != nil {
			return Answer{}, err
		}
		return Answer{Status: res.Status, Body: res.Body}, nil
	}
	key, err := r.key(ctx, b, in)
	if err != nil {
		return Answer{}, fmt.Errorf("the integration's API key: %w", err)
	}
	env := []string{"BP_API_URL=" + r.cfg.APIURL, "BP_TOKEN=" + key, "BP_BOT_ID=" + b.ID, "BP_INTEGRATION_ID=" + i.ID, "BP_WORKSPACE_ID=" + b.WorkspaceID}
	names := make([]string, 0, len(i.Spec.Secrets))
	for k := range i.Spec.Secrets {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		env = append(env, "SECRET_"+k+"="+i.Spec.Secrets[k])
	}
	bundle := nodehost.Bundle{BotID: b.ID, Integration: in.Name, Version: i.ID + "@" + strconv.FormatInt(i.UpdatedAt.UnixMicro(), 10), Code: i.Code, Env: env}
	res, err := r.cfg.Node.Call(cctx, bundle, nodehost.Request{Method: http.MethodPost, Path: "/", Header: h, Body: body})
	if err != nil {
		return Answer{}, err
	}
	return Answer{Status: res.Status, Header: res.Header, Body: res.Body}, nil
}

// Register tells the integration that b installed it as in (or changed
// the installation): its register handler sets up what it needs, e.g. its
// webhook at the provider. It returns the installation's status, and the
// reason of a failure as the integration gave it.
func (r *Runner) Register(ctx context.Context, b platform.Bot, in platform.BotIntegration) (status, reason string) {
	return r.registration(ctx, b, in, OpRegister)
}

// Unregister tells the integration that b removed it; a failure is only
// logged (the installation is gone whatever the integration says).
func (r *Runner) Unregister(ctx context.Context, b platform.Bot, in platform.BotIntegration) {
	if status, reason := r.registration(ctx, b, in, OpUnregister); status != platform.IntegrationRegistered {
		r.cfg.Log.Info("integration: unregister failed", "bot", b.ID, "integration", in.Name, "reason", reason)
	}
}

func (r *Runner) registration(ctx context.Context, b platform.Bot, in platform.BotIntegration, op string) (status, reason string) {
	body, _ := json.Marshal(map[string]string{"webhookUrl": r.WebhookURL(in.WebhookID)})
	res, err := r.Send(ctx, b, in, op, "", body)
	switch {
	case err != nil:
		return platform.IntegrationRegistrationFailed, err.Error()
	case res.Status >= 200 && res.Status < 300:
		return platform.IntegrationRegistered, ""
	}
	return platform.IntegrationRegistrationFailed, failure(res)
}

// failure is the reason of an error answer: the message of the SDK error
// the code threw, or its status.
func failure(res Answer) string {
	if msg := sdkbot.AnswerError(res.Status, res.Body); msg != "" {
		return msg
	}
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(res.Body, &e) == nil && e.Error != "" {
		return e.Error // the SDK's server, when the request itself is at fault
	}
	return fmt.Sprintf("the integration answered %d", res.Status)
}

// Action runs the action of the integration b installed as in, and
// returns its output.
func (r *Runner) Action(ctx context.Context, b platform.Bot, in platform.BotIntegration, action string, input json.RawMessage) (json.RawMessage, error) {
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	body, _ := json.Marshal(map[string]any{"type": action, "input": input})
	res, err := r.Send(ctx, b, in, OpAction, action, body)
	name := in.Name + ":" + action
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, platform.Errorf(platform.TypeOperationTimeout, "action %q: the integration did not answer in time", name)
		}
		return nil, platform.Errorf(platform.TypeRuntime, "action %q: %v", name, err)
	}
	if res.Status < 200 || res.Status >= 300 {
		return nil, platform.Errorf(platform.TypeRuntime, "action %q failed: %s", name, failure(res))
	}
	var out struct {
		Output json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(res.Body, &out); err != nil {
		return nil, platform.Errorf(platform.TypeRuntime, "action %q: the integration's answer is not JSON", name)
	}
	if len(out.Output) == 0 {
		out.Output = json.RawMessage(`{}`)
	}
	return out.Output, nil
}

// Request is a webhook as the provider sent it.
type Request struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// Installation is the deployed integration's installation that has the
// webhook id, and its bot (platform.ErrNotFound when none has: the built-in
// integrations' addresses are elsewhere).
func (r *Runner) Installation(ctx context.Context, webhookID string) (platform.Bot, platform.BotIntegration, error) {
	in, err := r.store.GetIntegrationByWebhook(ctx, webhookID)
	if err == nil && !in.Deployed() {
		err = platform.ErrNotFound
	}
	if err != nil {
		return platform.Bot{}, in, err
	}
	b, err := r.bot(ctx, in.BotID)
	return b, in, err
}

// Receive hands a webhook sent to the webhook URL of installation in of
// bot b to the integration's webhook handler and returns its answer, which
// goes back to the provider (a challenge, a CORS preflight, a status).
func (r *Runner) Receive(ctx context.Context, b platform.Bot, in platform.BotIntegration, req Request) (Answer, error) {
	if !in.Enabled {
		return Answer{}, platform.Errorf(platform.TypeResourceNotFound, "integration %s of this bot is disabled", in.Name)
	}
	headers := map[string]string{}
	for k, v := range req.Header {
		headers[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	payload := map[string]any{"method": req.Method, "path": req.Path, "query": req.Query, "headers": headers}
	if len(req.Body) > 0 {
		payload["body"] = string(req.Body)
	}
	body, err := json.Marshal(map[string]any{"req": payload})
	if err != nil {
		return Answer{}, err
	}
	return r.Send(ctx, b, in, OpWebhook, "", body)
}

// bot returns the bot's current version, read again only when it changed.
func (r *Runner) bot(ctx context.Context, botID string) (platform.Bot, error) {
	ws, updated, err := r.store.BotVersion(ctx, botID)
	if err != nil {
		return platform.Bot{}, err
	}
	r.mu.Lock()
	b, ok := r.bots[botID]
	r.mu.Unlock()
	if ok && b.UpdatedAt.Equal(updated) {
		return b, nil
	}
	if b, err = r.store.GetBot(ctx, ws, botID); err != nil {
		return b, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.bots) >= maxCachedBots {
		clear(r.bots)
	}
	r.bots[botID] = b
	return b, nil
}

// MessageCreated hands the bot's message in a conversation of the
// integration it installed as alias to that integration's channel handler
// (message_created); the message is the call's: a failure is the bot's
// createMessage's.
func (r *Runner) MessageCreated(ctx context.Context, botID, alias, messageType string, body []byte) error {
	b, err := r.bot(ctx, botID)
	if err != nil {
		return err
	}
	k := slices.IndexFunc(b.Integrations, func(in platform.BotIntegration) bool { return in.Name == alias })
	if k < 0 {
		return platform.Errorf(platform.TypeRuntime, "the conversation is of integration %q, which the bot no longer has: the message was stored and not sent", alias)
	}
	in := b.Integrations[k]
	if !in.Enabled {
		return platform.Errorf(platform.TypeRuntime, "integration %q of the bot is disabled: the message was stored and not sent", alias)
	}
	res, err := r.Send(ctx, b, in, OpMessage, messageType, body)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return platform.Errorf(platform.TypeOperationTimeout, "integration %q did not take the message in time", alias)
		}
		return platform.Errorf(platform.TypeRuntime, "integration %q could not send the message: %v", alias, err)
	}
	if res.Status < 200 || res.Status >= 300 {
		return platform.Errorf(platform.TypeRuntime, "integration %q could not send the message: %s", alias, failure(res))
	}
	return nil
}
