package admin

import "github.com/botplatform/botplatform/internal/platform"

// BotSecretsRole is the least role that reads a bot's signing secret: it
// signs what the platform sends the bot, and the roles that may change the
// bot (updateBot, rotateBotSigningSecrets) may have it; a viewer may not.
const BotSecretsRole = platform.RoleDeveloper

// Shown is b as an answer to a shows it: below BotSecretsRole, with an
// empty signing secret (the official client's Bot type requires the field).
func Shown(a *platform.Actor, b platform.Bot) platform.Bot {
	if a.Member.Role.AtLeast(BotSecretsRole) {
		return b
	}
	b.SigningSecret = ""
	return b
}
