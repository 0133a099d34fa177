package admin

import (
	"maps"
	"slices"

	"github.com/botplatform/botplatform/internal/platform"
)

// BotSecretsRole is the least role that reads a bot's secrets: its signing
// secret, which signs what the platform sends the bot, its chat
// integration's encryptionKey, which signs its chat users' keys, and its
// url, which for a dev bot names the `bp dev` tunnel whose id is the
// tunnel's only credential, and the configurations of the integrations it
// installed from a workspace (a provider's token, an API key). The roles
// that may change the bot (updateBot, rotateBotSigningSecrets) may have
// them; a viewer may not.
const BotSecretsRole = platform.RoleDeveloper

// Shown is b as an answer to a shows it: below BotSecretsRole, with an
// empty signing secret (the official client's Bot type requires the field),
// no url, no encryptionKey in its chat integration's configuration and no
// configuration of its deployed integrations.
func Shown(a *platform.Actor, b platform.Bot) platform.Bot {
	if a.Member.Role.AtLeast(BotSecretsRole) {
		return b
	}
	b.SigningSecret = ""
	b.Spec.URL = ""
	b.Integrations = slices.Clone(b.Integrations)
	for i, in := range b.Integrations {
		if in.Deployed() {
			in.Configuration = map[string]any{}
			b.Integrations[i] = in
			continue
		}
		if _, ok := in.Configuration["encryptionKey"]; ok {
			in.Configuration = maps.Clone(in.Configuration)
			delete(in.Configuration, "encryptionKey")
			b.Integrations[i] = in
		}
	}
	return b
}
