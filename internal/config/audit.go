package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// auditSettings is --audit-retention: how long the audit log keeps a record.
func auditSettings(c *Config) []setting {
	return []setting{
		{flag: "audit-retention", env: "AUDIT_RETENTION", def: "90d", usage: "how long audit records are kept (90d, 12h, …); 0 keeps them forever",
			set: func(s setting, v string) error {
				d, err := days(v)
				if err != nil || d < 0 || (d > 0 && d < time.Hour) {
					return fmt.Errorf("%s: must be 0 or a duration of at least 1h, in days (90d) or as 12h; got %q", s.flag, v)
				}
				c.AuditRetention = d
				return nil
			}},
	}
}

// days parses a duration that may be written in whole days ("90d").
func days(v string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(v, "d"); ok {
		d, err := strconv.Atoi(n)
		if err != nil {
			return 0, err
		}
		return time.Duration(d) * 24 * time.Hour, nil
	}
	if v == "0" {
		return 0, nil
	}
	return time.ParseDuration(v)
}
