package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/botplatform/botplatform/internal/audit"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
	"github.com/botplatform/botplatform/internal/webchat"
)

// ChatIntegrationID names the built-in chat integration that every bot has.
// The Bot object's integrations map is keyed by it.
const ChatIntegrationID = platform.ChatIntegrationID

// BotInput is the body of createBot and updateBot. In maps, a JSON null
// (a nil pointer, or the raw text null) removes the entry on update.
type BotInput struct {
	Name             *string                    `json:"name"`
	Description      *string                    `json:"description"`
	Tags             map[string]*string         `json:"tags"`
	URL              json.RawMessage            `json:"url"`
	Dev              *bool                      `json:"dev"`
	Code             *string                    `json:"code"`
	Secrets          map[string]*string         `json:"secrets"`
	Type             *string                    `json:"type"`
	MaxExecutionTime *int                       `json:"maxExecutionTime"`
	Medias           *[]platform.Media          `json:"medias"`
	States           map[string]json.RawMessage `json:"states"`
	Events           map[string]json.RawMessage `json:"events"`
	RecurringEvents  map[string]json.RawMessage `json:"recurringEvents"`
	Actions          map[string]json.RawMessage `json:"actions"`
	Subscriptions    json.RawMessage            `json:"subscriptions"`
	Configuration    *struct {
		Data   json.RawMessage `json:"data"`
		Schema json.RawMessage `json:"schema"`
	} `json:"configuration"`
	User           *TagDefs                   `json:"user"`
	Conversation   *TagDefs                   `json:"conversation"`
	Message        *TagDefs                   `json:"message"`
	Authentication *string                    `json:"authentication"`
	Blocked        *bool                      `json:"blocked"`
	AlwaysAlive    *bool                      `json:"alwaysAlive"`
	Layers         *[]string                  `json:"layers"`
	Integrations   map[string]json.RawMessage `json:"integrations"`
	Plugins        map[string]json.RawMessage `json:"plugins"`
	// Tables are created or migrated at deploy (`bp deploy` sends the
	// bot's declared tables); see TableDeployer.
	Tables map[string]json.RawMessage `json:"tables"`
}

// TagDefs declares the tags of users, conversations or messages.
type TagDefs struct {
	Tags map[string]json.RawMessage `json:"tags"`
}

// secretName is what a secret may be called: its name becomes part of an
// environment variable's (SECRET_<name>) for a bot written with the SDK.
var secretName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,99}$`)

// MaxExecutionTimeCeiling is the largest maxExecutionTime a bot may ask for, in seconds.
const MaxExecutionTimeCeiling = 900

func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

// mergeMap applies patch to the stored JSON object: null removes a key.
func mergeMap(stored json.RawMessage, patch map[string]json.RawMessage) json.RawMessage {
	m := map[string]json.RawMessage{}
	if len(stored) > 0 {
		_ = json.Unmarshal(stored, &m)
	}
	for k, v := range patch {
		if isNull(v) {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	out, _ := json.Marshal(m)
	return out
}

// dropNullAttributes removes null values from the attributes of event and
// action definitions: updateBot allows them there, meaning "no such attribute".
func dropNullAttributes(defs map[string]json.RawMessage) map[string]json.RawMessage {
	for k, raw := range defs {
		var def map[string]json.RawMessage
		if isNull(raw) || json.Unmarshal(raw, &def) != nil || def["attributes"] == nil {
			continue
		}
		attrs := map[string]json.RawMessage{}
		if json.Unmarshal(def["attributes"], &attrs) != nil {
			continue
		}
		for name, v := range attrs {
			if isNull(v) {
				delete(attrs, name)
			}
		}
		def["attributes"], _ = json.Marshal(attrs)
		defs[k], _ = json.Marshal(def)
	}
	return defs
}

func (s *Service) CreateBot(ctx context.Context, a *platform.Actor, in BotInput) (platform.Bot, error) {
	if err := require(a, platform.RoleDeveloper, "creating a bot"); err != nil {
		return platform.Bot{}, err
	}
	now := s.clock.Now()
	b := platform.Bot{
		ID: platform.NewID(platform.PrefixBot), WorkspaceID: a.Member.WorkspaceID, Name: "My Bot", Type: "studio",
		Status: "active", SigningSecret: platform.RandomToken(32), CreatedBy: a.Account.ID, Tags: map[string]string{},
		CreatedAt: now, UpdatedAt: now,
	}
	if in.Dev != nil {
		b.Dev = *in.Dev
	}
	b.Integrations = []platform.BotIntegration{platform.NewChatIntegration(b.ID, "", now)}
	if err := s.apply(ctx, &b, &in); err != nil {
		return b, err
	}
	created := audit.Record{Action: audit.CreateBot, ResourceID: b.ID, ResourceName: b.Name, Value: botChanges(in)}
	// The bot, its first version and its tables are created together, or
	// nothing is.
	err := s.store.InTx(s.audited(ctx, a, created), func(ctx context.Context) error {
		if err := s.store.CreateBot(ctx, b); err != nil {
			return err
		}
		if _, err := s.store.SaveBotVersion(ctx, b.WorkspaceID, s.newVersion(a, b), s.versionsKept(), nil); err != nil {
			return err
		}
		return s.deployTables(ctx, b, in.Tables)
	})
	if err != nil {
		return b, err
	}
	s.botsChanged()
	return b, s.registerInstallations(ctx, nil, &b)
}

func (s *Service) GetBot(ctx context.Context, a *platform.Actor, id string) (platform.Bot, error) {
	b, err := s.store.GetBot(ctx, a.Member.WorkspaceID, id)
	return b, notFound(err, "bot", id)
}

// UpdateOwnBotTags sets tags of a bot for its own API key (keyID, of the
// bot's workspace): what the agent kit's runtime saves with updateBot. Only
// tags: the key changes nothing else of its bot. The change is audited and
// versioned as the key's.
func (s *Service) UpdateOwnBotTags(ctx context.Context, keyID, workspaceID, botID string, tags map[string]*string) (platform.Bot, error) {
	a := &platform.Actor{Account: platform.Account{ID: keyID}, Member: platform.Member{WorkspaceID: workspaceID, Role: platform.RoleDeveloper}}
	return s.UpdateBot(ctx, a, botID, BotInput{Tags: tags})
}

func (s *Service) UpdateBot(ctx context.Context, a *platform.Actor, id string, in BotInput) (platform.Bot, error) {
	if err := require(a, platform.RoleDeveloper, "updating a bot"); err != nil {
		return platform.Bot{}, err
	}
	if in.Dev != nil {
		return platform.Bot{}, platform.Invalid("dev", "cannot be changed after the bot is created")
	}
	b, err := s.GetBot(ctx, a, id)
	if err != nil {
		return b, err
	}
	before := b
	// apply changes the maps and the installations in place
	before.Tags, before.Spec.Secrets, before.Integrations = maps.Clone(b.Tags), nil, slices.Clone(b.Integrations)
	if err := s.apply(ctx, &b, &in); err != nil {
		return b, err
	}
	b.UpdatedAt = s.clock.Now()
	rec := audit.Record{Action: botAction(in), ResourceID: b.ID, ResourceName: b.Name, Value: botChanges(in)}
	// The tables it declares and the bot are saved together, or nothing is.
	err = s.store.InTx(s.audited(ctx, a, rec), func(ctx context.Context) error {
		if err := s.deployTables(ctx, b, in.Tables); err != nil {
			return err
		}
		return notFound(s.saveBot(ctx, a, before, b), "bot", id)
	})
	if err != nil {
		return b, err
	}
	s.botsChanged()
	return b, s.registerInstallations(ctx, &before, &b)
}

func (s *Service) DeleteBot(ctx context.Context, a *platform.Actor, id string) error {
	if err := require(a, platform.RoleDeveloper, "deleting a bot"); err != nil {
		return err
	}
	b, err := s.GetBot(ctx, a, id)
	if err != nil {
		return err
	}
	// Its integrations undo what they set up for it (a webhook at their
	// provider) while the bot and their keys still exist.
	if s.registrar != nil {
		for _, in := range b.Integrations {
			if in.Deployed() {
				s.registrar.Unregister(ctx, b, in)
			}
		}
	}
	rec := audit.Record{Action: audit.DeleteBot, ResourceID: b.ID, ResourceName: b.Name}
	defer s.auth.clear() // its keys
	blobs, err := s.store.DeleteBot(s.audited(ctx, a, rec), a.Member.WorkspaceID, id)
	if err != nil {
		return notFound(err, "bot", id)
	}
	s.removeContent(ctx, blobs)
	s.botsChanged()
	return nil
}

func (s *Service) ListBots(ctx context.Context, a *platform.Actor, f store.BotFilter, pluginNames []string) ([]platform.BotSummary, string, error) {
	if len(pluginNames) > 0 {
		return []platform.BotSummary{}, "", nil // no plugin can be installed on this server
	}
	return s.store.ListBots(ctx, a.Member.WorkspaceID, f)
}

// WebhookURL is the Chat API address of a bot's chat integration.
func (s *Service) WebhookURL(webhookID string) string { return s.chatURL + "/" + webhookID }

// apply validates in and applies it to b (create and update alike).
// Tables the deployed code declares join in.Tables (those of the body win),
// for the caller to deploy once the bot is saved.
func (s *Service) apply(ctx context.Context, b *platform.Bot, in *BotInput) error {
	sp := &b.Spec
	if in.Name != nil {
		if err := checkName("name", *in.Name); err != nil {
			return err
		}
		b.Name = *in.Name
	}
	if in.Description != nil {
		if len(*in.Description) > 2000 {
			return platform.Invalid("description", "at most 2000 characters")
		}
		sp.Description = *in.Description
	}
	for _, k := range sortedKeys(in.Tags) {
		v := in.Tags[k]
		if v == nil {
			delete(b.Tags, k)
			continue
		}
		if k == "" || len(k) > 500 {
			return platform.Invalid("tags", "keys are 1 to 500 characters")
		}
		if len(*v) > 500 {
			return platform.Invalid("tags."+k, "at most 500 characters")
		}
		b.Tags[k] = *v
	}
	if len(in.URL) > 0 {
		var u *string
		if err := json.Unmarshal(in.URL, &u); err != nil {
			return platform.Invalid("url", "must be a string or null")
		}
		sp.URL = ""
		if u != nil && *u != "" {
			if err := checkBotURL(*u); err != nil {
				return err
			}
			if s.check != nil {
				if err := s.check.CheckURL(*u); err != nil {
					return err
				}
			}
			sp.URL = *u
		}
	}
	if in.Code != nil {
		def, err := s.checkCode(ctx, *in.Code)
		if err != nil {
			return err // the code deployed before stays
		}
		for name, t := range def.Tables {
			if in.Tables == nil {
				in.Tables = map[string]json.RawMessage{}
			}
			if _, ok := in.Tables[name]; !ok {
				in.Tables[name] = t
			}
		}
		b.Code = *in.Code
		now := s.clock.Now()
		b.DeployedAt = &now
	}
	for _, k := range sortedKeys(in.Secrets) {
		v := in.Secrets[k]
		if v != nil && !secretName.MatchString(k) {
			return platform.Invalid("secrets", "%q is not a secret name: letters, digits and _, not starting with a digit, at most 100 characters (an SDK bot reads it as the variable SECRET_<name>)", k)
		}
		if sp.Secrets == nil {
			sp.Secrets = map[string]string{}
		}
		if v == nil {
			delete(sp.Secrets, k)
		} else {
			sp.Secrets[k] = *v
		}
	}
	if in.Type != nil {
		b.Type = *in.Type
	}
	if in.MaxExecutionTime != nil {
		if *in.MaxExecutionTime < 1 || *in.MaxExecutionTime > MaxExecutionTimeCeiling {
			return platform.Invalid("maxExecutionTime", "must be between 1 and %d seconds", MaxExecutionTimeCeiling)
		}
		sp.MaxExecutionTime = in.MaxExecutionTime
	}
	if in.Medias != nil {
		sp.Medias = *in.Medias
	}
	if in.States != nil {
		sp.States = mergeMap(sp.States, in.States)
	}
	if in.Events != nil {
		sp.Events = mergeMap(sp.Events, dropNullAttributes(in.Events))
	}
	if in.RecurringEvents != nil {
		sp.RecurringEvents = mergeMap(sp.RecurringEvents, in.RecurringEvents)
		if err := s.checkRecurring(sp.RecurringEvents); err != nil {
			return err
		}
	}
	if in.Actions != nil {
		sp.Actions = mergeMap(sp.Actions, dropNullAttributes(in.Actions))
	}
	if len(in.Subscriptions) > 0 {
		sp.Subscriptions = in.Subscriptions
	}
	if c := in.Configuration; c != nil {
		cfg := map[string]json.RawMessage{}
		if len(sp.Configuration) > 0 {
			_ = json.Unmarshal(sp.Configuration, &cfg)
		}
		if len(c.Data) > 0 {
			cfg["data"] = c.Data
		}
		if len(c.Schema) > 0 {
			cfg["schema"] = c.Schema
		}
		sp.Configuration, _ = json.Marshal(cfg)
	}
	for _, t := range []struct {
		in  *TagDefs
		dst *json.RawMessage
	}{{in.User, &sp.UserTags}, {in.Conversation, &sp.ConversationTags}, {in.Message, &sp.MessageTags}} {
		if t.in != nil && t.in.Tags != nil {
			*t.dst = mergeMap(*t.dst, t.in.Tags)
		}
	}
	if in.Authentication != nil {
		sp.Authentication = *in.Authentication
	}
	if in.Blocked != nil {
		sp.Blocked = *in.Blocked
	}
	if in.AlwaysAlive != nil {
		sp.AlwaysAlive = *in.AlwaysAlive
	}
	if in.Layers != nil {
		sp.Layers = *in.Layers
	}
	for _, k := range sortedKeys(in.Integrations) {
		if err := s.applyIntegration(ctx, b, k, in.Integrations[k]); err != nil {
			return err
		}
	}
	for _, k := range sortedKeys(in.Plugins) {
		if err := s.applyPlugin(ctx, b, k, in.Plugins[k]); err != nil {
			return err
		}
	}
	return checkPluginBacking(b)
}

// integrationPatch is one entry of updateBot's integrations map.
type integrationPatch struct {
	Enabled           *bool          `json:"enabled"`
	IntegrationID     *string        `json:"integrationId"`
	ConfigurationType *string        `json:"configurationType"`
	Configuration     map[string]any `json:"configuration"`
	DisabledChannels  *[]string      `json:"disabledChannels"`
}

func (s *Service) applyIntegration(ctx context.Context, b *platform.Bot, key string, raw json.RawMessage) error {
	at := -1
	for i := range b.Integrations {
		if b.Integrations[i].IntegrationID == key || b.Integrations[i].Name == key {
			at = i
		}
	}
	if isNull(raw) {
		// null removes an integration: @botpress/cli sends it for every
		// integration the bot does not declare. The built-in chat
		// integration stays (enabled: false disables it).
		if at >= 0 && b.Integrations[at].IntegrationID != ChatIntegrationID {
			b.Integrations = slices.Delete(b.Integrations, at, at+1)
		}
		return nil
	}
	field := "integrations." + key
	var p integrationPatch
	if err := json.Unmarshal(raw, &p); err != nil {
		return platform.Invalid(field, "must be an object")
	}
	builtin := func(id string) bool {
		return platform.ServesChatAPI(id) || id == platform.LLMIntegrationID || id == platform.LLMIntegration
	}
	switch {
	case at < 0 && (key == platform.WebchatIntegrationID || p.IntegrationID != nil && *p.IntegrationID == platform.WebchatIntegrationID):
		// An installation of the built-in webchat integration: a Chat API
		// webhook of its own, whose conversations are the webchat channel.
		if key != platform.WebchatIntegrationID {
			return platform.Invalid(field, "the %s integration is installed under its name, %q, the alias its actions are called by", platform.WebchatIntegrationID, platform.WebchatIntegrationID)
		}
		b.Integrations = append(b.Integrations, platform.NewWebchatIntegration(b.ID, s.clock.Now()))
		at = len(b.Integrations) - 1
		p.IntegrationID = &b.Integrations[at].IntegrationID
		return s.patchBuiltin(b, at, field, p)
	case at < 0 && p.IntegrationID != nil && (*p.IntegrationID == platform.LLMIntegrationID || *p.IntegrationID == platform.LLMIntegration):
		// An installation of the built-in LLM integration, under its name
		// (the alias the official clients call its actions by).
		if key != platform.LLMIntegration && key != platform.LLMIntegrationID {
			return platform.Invalid(field, "the %s integration is installed under its name, %q, the alias its actions are called by", platform.LLMIntegration, platform.LLMIntegration)
		}
		b.Integrations = append(b.Integrations, platform.NewLLMIntegration(b.ID, s.clock.Now()))
		at = len(b.Integrations) - 1
		p.IntegrationID = &b.Integrations[at].IntegrationID
	case at >= 0 && builtin(b.Integrations[at].IntegrationID):
	default:
		// An integration a workspace deployed: installed, or moved to
		// another of its versions. @botpress/cli 0.8.59 keys it by its id
		// (the alias is then its name); newer ones by alias.
		id := key
		switch {
		case p.IntegrationID != nil:
			id = *p.IntegrationID
		case at >= 0:
			id = b.Integrations[at].IntegrationID // its configuration changed, say
		}
		i, err := s.installable(ctx, b.WorkspaceID, id)
		if err != nil {
			return platform.Errorf(platform.TypeReferenceNotFound, "%s: integration %q not found: deploy it (bp deploy), or name one of the hub's (getPublicIntegration)", field, id)
		}
		alias := key
		if key == i.ID {
			// Keyed by id, it goes by its name without the handle: what the
			// bot's code of @botpress/sdk 0.x calls it ("telegram:…").
			alias = path.Base(i.Name)
		}
		if at >= 0 {
			alias = b.Integrations[at].Name
		}
		if !aliasRe.MatchString(alias) {
			return platform.Invalid(field, "%q is not an alias: lower-case letters, digits, dashes, underscores and slashes (bot code calls its actions as \"<alias>:<action>\")", alias)
		}
		for k, other := range b.Integrations {
			if k != at && (other.Name == alias || other.IntegrationID == i.ID) {
				return platform.Errorf(platform.TypeAlreadyExists, "%s: the bot has integration %q (%s) installed already", field, other.Name, other.IntegrationID)
			}
		}
		if at < 0 {
			now := s.clock.Now()
			b.Integrations = append(b.Integrations, platform.BotIntegration{
				BotID: b.ID, Name: alias, WebhookID: strings.ToLower(platform.NewID("")), Enabled: true,
				Configuration: map[string]any{}, DisabledChannels: []string{}, CreatedAt: now,
			})
			at = len(b.Integrations) - 1
		}
		in := &b.Integrations[at]
		if in.IntegrationID != i.ID {
			in.IntegrationID, in.Version, in.Status = i.ID, i.Version, "" // registered anew
		}
		if p.Enabled != nil {
			in.Enabled = *p.Enabled
		}
		if p.DisabledChannels != nil {
			in.DisabledChannels = *p.DisabledChannels
		}
		if p.ConfigurationType != nil && *p.ConfigurationType != in.ConfigurationType {
			in.ConfigurationType, in.Status = *p.ConfigurationType, ""
		}
		if p.Configuration != nil {
			in.Configuration, in.Status = p.Configuration, ""
		}
		if in.Status == "" {
			// A configuration the integration's schema refuses is not
			// registered: the installation says why, as the CLI shows it.
			if err := checkConfiguration(i, in); err != nil {
				in.Status, in.StatusReason = platform.IntegrationRegistrationFailed, err.Error()
			}
		}
		in.UpdatedAt = s.clock.Now()
		return nil
	}
	if at < 0 {
		return platform.Errorf(platform.TypeReferenceNotFound, "%s: integration not found", field)
	}
	return s.patchBuiltin(b, at, field, p)
}

// patchBuiltin applies p to the bot's installation at of a built-in
// integration.
func (s *Service) patchBuiltin(b *platform.Bot, at int, field string, p integrationPatch) error {
	in := &b.Integrations[at]
	if p.IntegrationID != nil && *p.IntegrationID != in.IntegrationID && *p.IntegrationID != in.Name {
		return platform.Invalid(field+".integrationId", "must be %q", in.IntegrationID)
	}
	if p.Enabled != nil {
		in.Enabled = *p.Enabled
	}
	if p.DisabledChannels != nil {
		in.DisabledChannels = *p.DisabledChannels
	}
	if p.Configuration != nil && !platform.ServesChatAPI(in.IntegrationID) {
		if len(p.Configuration) > 0 {
			return platform.Invalid(field+".configuration", "the %s integration takes no configuration: its models are the server's (docs/llm.md)", in.Name)
		}
		p.Configuration = nil
	}
	if p.Configuration != nil {
		cfg := p.Configuration
		switch k := cfg["encryptionKey"].(type) {
		case nil:
			cfg["encryptionKey"] = in.Configuration["encryptionKey"] // the Chat API's integrations always have a key
		case string:
			if len(k) < 16 || len(k) > 512 {
				return platform.Invalid(field+".configuration.encryptionKey", "must be 16 to 512 characters")
			}
		default:
			return platform.Invalid(field+".configuration.encryptionKey", "must be a string")
		}
		if v, ok := cfg[webchat.OriginsKey]; ok && v == nil {
			delete(cfg, webchat.OriginsKey) // null: none
		} else if ok {
			origins, err := webchat.CheckOrigins(field+".configuration."+webchat.OriginsKey, v)
			if err != nil {
				return err
			}
			cfg[webchat.OriginsKey] = origins
		}
		in.Configuration = cfg
	}
	in.UpdatedAt = s.clock.Now()
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// RotateSigningSecret gives the bot a new signing secret and returns it.
func (s *Service) RotateSigningSecret(ctx context.Context, a *platform.Actor, id string) (string, error) {
	if err := require(a, platform.RoleDeveloper, "rotating a bot's signing secret"); err != nil {
		return "", err
	}
	b, err := s.GetBot(ctx, a, id)
	if err != nil {
		return "", err
	}
	b.SigningSecret = platform.RandomToken(32)
	b.UpdatedAt = s.clock.Now()
	rec := audit.Record{Action: audit.RotateBotSecret, ResourceID: b.ID, ResourceName: b.Name}
	return b.SigningSecret, notFound(s.store.UpdateBot(s.audited(ctx, a, rec), b), "bot", id)
}

// MaxFetchHosts bounds a bot's fetch allowlist.
const MaxFetchHosts = 50

var fetchHostRe = regexp.MustCompile(`^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// SetFetchHosts replaces the hosts a bot's code may fetch from (none turns
// fetch off): host names, or "*.name" for its subdomains.
func (s *Service) SetFetchHosts(ctx context.Context, a *platform.Actor, id string, hosts []string) (platform.Bot, error) {
	if err := require(a, platform.RoleDeveloper, "changing a bot's fetch allowlist"); err != nil {
		return platform.Bot{}, err
	}
	if len(hosts) > MaxFetchHosts {
		return platform.Bot{}, platform.Invalid("hosts", "at most %d hosts", MaxFetchHosts)
	}
	clean := make([]string, 0, len(hosts))
	for i, h := range hosts {
		h = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(h), "."))
		if len(h) > 253 || !fetchHostRe.MatchString(h) {
			return platform.Bot{}, platform.Invalid(fmt.Sprintf("hosts[%d]", i), "%q is not a host name (or *.name)", hosts[i])
		}
		if !slices.Contains(clean, h) {
			clean = append(clean, h)
		}
	}
	b, err := s.GetBot(ctx, a, id)
	if err != nil {
		return b, err
	}
	before := b
	b.Spec.FetchHosts = clean
	b.UpdatedAt = s.clock.Now()
	hostList := strings.Join(clean, ", ")
	if hostList == "" {
		hostList = "none"
	}
	rec := audit.Record{Action: audit.UpdateBotConfig, ResourceID: b.ID, ResourceName: b.Name, Value: "fetch hosts: " + hostList}
	if err := s.saveBot(s.audited(ctx, a, rec), a, before, b); err != nil {
		return b, notFound(err, "bot", id)
	}
	s.botsChanged()
	return b, nil
}

// checkBotURL checks the url a bot is served at (a bot written with the
// SDK: the server POSTs its events there).
func checkBotURL(u string) error {
	if len(u) > 2000 {
		return platform.Invalid("url", "at most 2000 characters")
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return platform.Invalid("url", "must be an absolute http or https URL")
	}
	if p.User != nil {
		return platform.Invalid("url", "must not hold credentials")
	}
	return nil
}
