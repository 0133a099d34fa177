package platform

import (
	"encoding/json"
	"strings"
	"time"
)

// Integration is one version of an integration a workspace deployed
// (`bp deploy` of an integration project). Its definition, as given to
// createIntegration/updateIntegration, lives in Spec, stored as one JSON
// document; its code is the CommonJS bundle the CLI built.
type Integration struct {
	ID          string
	WorkspaceID string
	Name        string
	Version     string
	Dev         bool
	// Visibility is "private" (the workspace's own), "public" (in the hub,
	// listed) or "unlisted" (in the hub by name or id, not listed).
	Visibility string
	CreatedBy  string
	Spec       IntegrationSpec
	Code       string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// InHub reports whether every workspace may read and install the
// integration.
func (i *Integration) InHub() bool {
	return i.Visibility == "public" || i.Visibility == "unlisted"
}

// IntegrationSpec is an integration's definition: JSON-Schema documents and
// descriptions kept as given, and its secrets' values (never shown; the
// integration's code reads them as SECRET_<NAME> variables).
type IntegrationSpec struct {
	Title           string            `json:"title,omitempty"`
	Description     string            `json:"description,omitempty"`
	URL             string            `json:"url,omitempty"`
	SDKVersion      string            `json:"sdkVersion,omitempty"`
	Icon            string            `json:"icon,omitempty"`   // SVG, base64
	Readme          string            `json:"readme,omitempty"` // Markdown, base64
	Secrets         map[string]string `json:"secrets,omitempty"`
	Configuration   json.RawMessage   `json:"configuration,omitempty"`
	Configurations  json.RawMessage   `json:"configurations,omitempty"`
	Channels        json.RawMessage   `json:"channels,omitempty"`
	States          json.RawMessage   `json:"states,omitempty"`
	Events          json.RawMessage   `json:"events,omitempty"`
	Actions         json.RawMessage   `json:"actions,omitempty"`
	Entities        json.RawMessage   `json:"entities,omitempty"`
	User            json.RawMessage   `json:"user,omitempty"`
	Identifier      json.RawMessage   `json:"identifier,omitempty"`
	Interfaces      json.RawMessage   `json:"interfaces,omitempty"`
	Attributes      json.RawMessage   `json:"attributes,omitempty"`
	NameTemplate    json.RawMessage   `json:"nameTemplate,omitempty"` // an interface's
	Conversation    json.RawMessage   `json:"conversation,omitempty"` // a plugin's
	Message         json.RawMessage   `json:"message,omitempty"`      // a plugin's (@botpress/client 1.x sends its tags)
	Dependencies    json.RawMessage   `json:"dependencies,omitempty"` // a plugin's
	ExtraOperations json.RawMessage   `json:"extraOperations,omitempty"`
	Layers          []string          `json:"layers,omitempty"`
	// MaxExecutionTime bounds one call of the integration's code, in
	// seconds (the platform's default when nil).
	MaxExecutionTime *int `json:"maxExecutionTime,omitempty"`
}

// VersionRef names a version of an integration, interface or plugin, as a
// definition that refers to one stores it.
type VersionRef struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

// IntegrationKeyPrefix starts the id of the bot API key an installed
// integration's code calls the platform with; the key's note names the
// installation (IntegrationKeyNote).
const IntegrationKeyPrefix = PrefixBotKey + "intg"

const integrationKeyNote = "integration:"

// IntegrationKeyNote is the note of the key of the installation alias of
// integration version id.
func IntegrationKeyNote(alias, integrationID string) string {
	return integrationKeyNote + alias + ":" + integrationID
}

// IntegrationKeyOf tells whether a bot API key is an installed
// integration's, and which: its alias in the bot and its integration id.
// Calls made with it act as that integration only.
func IntegrationKeyOf(key Token) (alias, integrationID string, ok bool) {
	rest, found := strings.CutPrefix(key.Note, integrationKeyNote)
	if !found || !strings.HasPrefix(key.ID, IntegrationKeyPrefix) {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}
