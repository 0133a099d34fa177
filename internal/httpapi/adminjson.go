package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/botplatform/botplatform/internal/admin"
	"github.com/botplatform/botplatform/internal/platform"
)

// Wire shapes of the Admin API (compat-notes §2.3). Dates are UTC with Z.

type workspaceJSON struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	OwnerID        string   `json:"ownerId"`
	CreatedAt      string   `json:"createdAt"`
	UpdatedAt      string   `json:"updatedAt"`
	BotCount       int      `json:"botCount"`
	BillingVersion string   `json:"billingVersion"`
	Plan           string   `json:"plan"`
	Blocked        bool     `json:"blocked"`
	SpendingLimit  int64    `json:"spendingLimit"`
	About          string   `json:"about,omitempty"`
	ProfilePicture string   `json:"profilePicture,omitempty"`
	ContactEmail   string   `json:"contactEmail,omitempty"`
	Website        string   `json:"website,omitempty"`
	SocialAccounts []string `json:"socialAccounts,omitempty"`
	IsPublic       bool     `json:"isPublic"`
	Handle         string   `json:"handle,omitempty"`
	ActiveTrialID  *string  `json:"activeTrialId"`
}

func toWorkspace(w platform.Workspace) workspaceJSON {
	return workspaceJSON{
		ID: w.ID, Name: w.Name, OwnerID: w.OwnerID, CreatedAt: platform.FormatTime(w.CreatedAt), UpdatedAt: platform.FormatTime(w.UpdatedAt),
		BotCount: w.BotCount, BillingVersion: w.BillingVersion, Plan: w.Plan, Blocked: w.Blocked, SpendingLimit: w.SpendingLimit,
		About: w.About, ProfilePicture: w.ProfilePicture, ContactEmail: w.ContactEmail, Website: w.Website,
		SocialAccounts: w.SocialAccounts, IsPublic: w.IsPublic, Handle: w.Handle,
	}
}

type memberJSON struct {
	ID          string `json:"id"`
	UserID      string `json:"userId"`
	Email       string `json:"email"`
	DisplayName string `json:"displayName,omitempty"`
	Role        string `json:"role"`
	CreatedAt   string `json:"createdAt"`
}

func toMember(m platform.Member) memberJSON {
	return memberJSON{m.ID, m.AccountID, m.Email, m.DisplayName, string(m.Role), platform.FormatTime(m.CreatedAt)}
}

type tokenJSON struct {
	ID        string `json:"id"`
	CreatedAt string `json:"createdAt"`
	Note      string `json:"note"`
	Value     string `json:"value,omitempty"`
}

func toToken(t platform.Token, value string) tokenJSON {
	return tokenJSON{t.ID, platform.FormatTime(t.CreatedAt), t.Note, value}
}

type integrationJSON struct {
	ID                 string         `json:"id"`
	Enabled            bool           `json:"enabled"`
	Name               string         `json:"name"`
	Version            string         `json:"version"`
	WebhookURL         string         `json:"webhookUrl"`
	WebhookID          string         `json:"webhookId"`
	ConfigurationType  *string        `json:"configurationType"`
	Configuration      map[string]any `json:"configuration"`
	Status             string         `json:"status"`
	StatusReason       *string        `json:"statusReason"`
	DisabledChannels   []string       `json:"disabledChannels"`
	CreatedAt          string         `json:"createdAt"`
	UpdatedAt          string         `json:"updatedAt"`
	Title              string         `json:"title"`
	Description        string         `json:"description"`
	IconURL            string         `json:"iconUrl"`
	Public             bool           `json:"public"`
	Visibility         string         `json:"visibility"`
	VerificationStatus string         `json:"verificationStatus"`
	LifecycleStatus    string         `json:"lifecycleStatus"`
}

type botJSON struct {
	ID               string                     `json:"id"`
	CreatedAt        string                     `json:"createdAt"`
	UpdatedAt        string                     `json:"updatedAt"`
	SigningSecret    string                     `json:"signingSecret"`
	Integrations     map[string]integrationJSON `json:"integrations"`
	Plugins          map[string]any             `json:"plugins"`
	MaxExecutionTime *int                       `json:"maxExecutionTime,omitempty"`
	User             tagDefsJSON                `json:"user"`
	Conversation     tagDefsJSON                `json:"conversation"`
	Message          tagDefsJSON                `json:"message"`
	States           json.RawMessage            `json:"states"`
	Configuration    json.RawMessage            `json:"configuration"`
	Events           json.RawMessage            `json:"events"`
	RecurringEvents  map[string]map[string]any  `json:"recurringEvents"`
	Subscriptions    json.RawMessage            `json:"subscriptions"`
	Actions          json.RawMessage            `json:"actions"`
	Tags             map[string]string          `json:"tags"`
	Name             string                     `json:"name"`
	Description      string                     `json:"description,omitempty"`
	DeployedAt       string                     `json:"deployedAt,omitempty"`
	Dev              bool                       `json:"dev"`
	Secrets          []string                   `json:"secrets"`
	CreatedBy        string                     `json:"createdBy,omitempty"`
	AlwaysAlive      bool                       `json:"alwaysAlive"`
	Status           string                     `json:"status"`
	Medias           []platform.Media           `json:"medias"`
	Type             string                     `json:"type"`
	Blocked          bool                       `json:"blocked"`
	Authentication   string                     `json:"authentication,omitempty"`
	Layers           []string                   `json:"layers,omitempty"`
	// URL is where the bot is served (a bot written with the SDK); not in
	// the official client's Bot type, which has no field for it.
	URL string `json:"url,omitempty"`
}

type tagDefsJSON struct {
	Tags json.RawMessage `json:"tags"`
}

// orEmpty returns raw, or {} when nothing is stored.
func orEmpty(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage(`{}`)
	}
	return raw
}

// byAlias tells whether the request asks for the bot's integrations keyed
// by alias (x-multiple-integrations, which the agent kit's runtime sends)
// rather than by integration id (the official clients' default).
func byAlias(r *http.Request) bool { return r.Header.Get("x-multiple-integrations") == "true" }

// toBot is b as an answer to act shows it (admin.Shown), its integrations
// keyed by alias or by integration id (byAlias).
// toBot renders a bot; installed holds the integration versions of its
// deployed integrations (admin.Service.Installed).
func toBot(act *platform.Actor, b platform.Bot, svc *admin.Service, alias bool, installed map[string]platform.Integration) botJSON {
	b = admin.Shown(act, b)
	sp := b.Spec
	out := botJSON{
		ID: b.ID, CreatedAt: platform.FormatTime(b.CreatedAt), UpdatedAt: platform.FormatTime(b.UpdatedAt),
		SigningSecret: b.SigningSecret, Integrations: map[string]integrationJSON{}, Plugins: map[string]any{},
		MaxExecutionTime: sp.MaxExecutionTime, URL: sp.URL,
		User: tagDefsJSON{orEmpty(sp.UserTags)}, Conversation: tagDefsJSON{orEmpty(sp.ConversationTags)}, Message: tagDefsJSON{orEmpty(sp.MessageTags)},
		States: orEmpty(sp.States), Events: orEmpty(sp.Events), Actions: orEmpty(sp.Actions),
		Subscriptions: sp.Subscriptions, Tags: b.Tags, Name: b.Name, Description: sp.Description, Dev: b.Dev,
		Secrets: []string{}, CreatedBy: b.CreatedBy, AlwaysAlive: sp.AlwaysAlive, Status: b.Status, Medias: sp.Medias,
		Type: b.Type, Blocked: sp.Blocked, Authentication: sp.Authentication, Layers: sp.Layers,
	}
	if len(out.Subscriptions) == 0 {
		out.Subscriptions = json.RawMessage(`{"events":null}`)
	}
	if out.Medias == nil {
		out.Medias = []platform.Media{}
	}
	if out.Tags == nil {
		out.Tags = map[string]string{}
	}
	cfg := map[string]json.RawMessage{"data": json.RawMessage(`{}`), "schema": json.RawMessage(`{}`)}
	if len(sp.Configuration) > 0 {
		_ = json.Unmarshal(sp.Configuration, &cfg)
	}
	out.Configuration, _ = json.Marshal(cfg)
	out.RecurringEvents = map[string]map[string]any{}
	if len(sp.RecurringEvents) > 0 {
		_ = json.Unmarshal(sp.RecurringEvents, &out.RecurringEvents)
	}
	for _, ev := range out.RecurringEvents {
		if _, ok := ev["failedAttempts"]; !ok {
			ev["failedAttempts"] = 0
		}
		if _, ok := ev["lastFailureReason"]; !ok {
			ev["lastFailureReason"] = nil
		}
	}
	for k := range sp.Secrets {
		out.Secrets = append(out.Secrets, k)
	}
	sortStrings(out.Secrets)
	if b.DeployedAt != nil {
		out.DeployedAt = platform.FormatTime(*b.DeployedAt)
	}
	for _, in := range b.Integrations {
		j := integrationJSON{
			ID: in.IntegrationID, Enabled: in.Enabled, Name: in.Name, Version: in.Version,
			WebhookURL: svc.WebhookURL(in.WebhookID), WebhookID: in.WebhookID, Configuration: in.Configuration,
			Status: "registered", DisabledChannels: in.DisabledChannels,
			CreatedAt: platform.FormatTime(in.CreatedAt), UpdatedAt: platform.FormatTime(in.UpdatedAt),
			Title: "Chat", Description: "Chat API for custom clients (built in)", Visibility: "public",
			VerificationStatus: "approved", LifecycleStatus: "published", Public: true,
		}
		if in.IntegrationID == platform.WebchatIntegrationID {
			j.Title, j.Description = "Webchat", "The official web chat's channel on the Chat API (built in)"
		}
		if in.IntegrationID == platform.LLMIntegrationID {
			j.Title, j.Description = llmTitle, llmDescription
			j.WebhookURL = "" // it receives nothing
		}
		if in.Deployed() {
			i, ok := installed[in.IntegrationID]
			// A deployed integration: its own status and webhook URL.
			j.WebhookURL, j.Status = svc.IntegrationWebhookURL(in.WebhookID), in.Status
			if in.StatusReason != "" {
				j.StatusReason = &in.StatusReason
			}
			if in.ConfigurationType != "" {
				j.ConfigurationType = &in.ConfigurationType
			}
			j.Title, j.Description, j.IconURL, j.Visibility, j.Public = in.Name, "", "", "private", false
			j.VerificationStatus = "unapproved"
			if ok {
				j.Name = i.Name // the alias is the key with x-multiple-integrations
				sum := integrationSummary(i, nil)
				j.Title, j.Description, j.IconURL = sum["title"].(string), sum["description"].(string), sum["iconUrl"].(string)
				j.Visibility, j.Public = i.Visibility, i.Visibility == "public"
			}
		}
		key := in.IntegrationID
		if alias {
			key = in.Name // the alias the bot's code calls it by
		}
		out.Integrations[key] = j
	}
	for _, p := range b.Plugins {
		out.Plugins[p.Alias] = botPluginJSON(p, installed)
	}
	return out
}

type botListItemJSON struct {
	ID         string          `json:"id"`
	CreatedAt  string          `json:"createdAt"`
	UpdatedAt  string          `json:"updatedAt"`
	Name       string          `json:"name"`
	DeployedAt string          `json:"deployedAt,omitempty"`
	Tags       json.RawMessage `json:"tags"`
	Type       string          `json:"type"`
}

func toBotListItem(b platform.BotSummary) botListItemJSON {
	it := botListItemJSON{ID: b.ID, CreatedAt: platform.FormatTime(b.CreatedAt), UpdatedAt: platform.FormatTime(b.UpdatedAt), Name: b.Name, Tags: b.Tags, Type: b.Type}
	if b.DeployedAt != nil {
		it.DeployedAt = platform.FormatTime(*b.DeployedAt)
	}
	if len(it.Tags) == 0 {
		it.Tags = json.RawMessage(`{}`)
	}
	return it
}

type metaJSON struct {
	NextToken string `json:"nextToken,omitempty"`
}
