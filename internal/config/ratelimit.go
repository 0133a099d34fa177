package config

import (
	"fmt"
	"strings"

	"github.com/botplatform/botplatform/internal/ratelimit"
)

// rateUsage says what each kind of rate limit counts (docs/limits.md).
var rateUsage = map[ratelimit.Kind]string{
	ratelimit.Token:    "requests per personal access token or bot API key, on every API",
	ratelimit.Bot:      "requests acting for one bot (Files, Runtime, Tables and Chat APIs, its own code's calls), whoever sends them",
	ratelimit.ChatUser: "Chat API requests per chat user (x-user-key)",
	ratelimit.Address:  "Chat API requests without a valid x-user-key (createUser, the hello probe) per client address",
}

// rateSettings are --rate-limit-token, -bot, -chat-user and -address.
func rateSettings(c *Config) []setting {
	var list []setting
	for _, k := range ratelimit.Kinds {
		list = append(list, setting{
			flag: "rate-limit-" + strings.ReplaceAll(string(k), "_", "-"), env: "RATE_LIMIT_" + strings.ToUpper(string(k)), def: "off",
			usage: rateUsage[k] + ", as N/PERIOD[,burst=B] such as 100/s or 6000/m,burst=200; off: no limit",
			set: func(s setting, v string) error {
				r, err := ratelimit.ParseRate(v)
				if err != nil {
					return fmt.Errorf("%s: %v", s.flag, err)
				}
				if !r.Off() {
					if c.RateLimits == nil {
						c.RateLimits = ratelimit.Rates{}
					}
					c.RateLimits[k] = r
				}
				return nil
			},
		})
	}
	return list
}
