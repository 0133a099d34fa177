package webchat

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/botplatform/botplatform/internal/platform"
)

// OriginsKey is where a bot's allowed origins live: a list in its chat
// integration's configuration (integrations.chat.configuration), so that
// updateBot of the official client sets them and the Chat API reads them
// with the webhook, at no extra cost.
const OriginsKey = "allowedOrigins"

// MaxOrigins bounds a bot's allowed origins.
const MaxOrigins = 100

var schemeRe = regexp.MustCompile(`^[a-z][a-z0-9+.-]*$`)

// CheckOrigins validates the allowed origins v (a JSON list of strings, as
// decoded) and returns them normalised: each is "*" or an origin
// scheme://host[:port] (host names lower-cased, a default port dropped, a
// lone trailing slash ignored); "*." before the host allows its subdomains.
// field names the list in errors.
func CheckOrigins(field string, v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, platform.Invalid(field, "must be a list of origins such as https://shop.example.com (or \"*\" for any)")
	}
	if len(list) > MaxOrigins {
		return nil, platform.Invalid(field, "at most %d origins", MaxOrigins)
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := e.(string)
		f := fmt.Sprintf("%s[%d]", field, i)
		if !ok {
			return nil, platform.Invalid(f, "must be a string")
		}
		o, err := normalise(s)
		if err != nil {
			return nil, platform.Invalid(f, "%q is not an origin: %s", s, err)
		}
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out, nil
}

// normalise returns the origin s stands for.
func normalise(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "*" {
		return s, nil
	}
	if len(s) > 300 {
		return "", fmt.Errorf("at most 300 characters")
	}
	scheme, rest, ok := strings.Cut(s, "://")
	scheme = strings.ToLower(scheme)
	if !ok || !schemeRe.MatchString(scheme) {
		return "", fmt.Errorf("want scheme://host[:port], such as https://shop.example.com")
	}
	rest = strings.TrimSuffix(rest, "/")
	if strings.ContainsAny(rest, "/?#@\\ ") {
		return "", fmt.Errorf("an origin is scheme://host[:port] only: no path, query, fragment or user")
	}
	wild := strings.HasPrefix(rest, "*.")
	u, err := url.Parse(scheme + "://" + strings.TrimPrefix(rest, "*."))
	if err != nil || u.Hostname() == "" || strings.Contains(u.Hostname(), "*") {
		return "", fmt.Errorf("want scheme://host[:port], such as https://shop.example.com")
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port != "" {
		if n, err := net.LookupPort("tcp", port); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("the port must be a number from 1 to 65535")
		}
	}
	if scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if wild {
		host = "*." + host
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, nil
}

// Allowed tells whether a browser page of origin may call a Chat API whose
// bot allows origins.
func Allowed(origins []string, origin string) bool {
	o, err := normalise(origin)
	if origin == "*" || err != nil { // "null" (a sandboxed page) and the like too
		return false
	}
	for _, a := range origins {
		if a == "*" || a == o {
			return true
		}
		// *.example.com: a subdomain's origin, same scheme and port.
		if scheme, host, ok := strings.Cut(a, "://*."); ok {
			if rest, ok := strings.CutPrefix(o, scheme+"://"); ok && strings.HasSuffix(rest, "."+host) && !strings.HasPrefix(rest, ".") {
				return true
			}
		}
	}
	return false
}

// Origins reads the allowed origins from a chat integration's
// configuration (already checked when saved).
func Origins(configuration map[string]any) []string {
	if list, ok := configuration[OriginsKey].([]string); ok {
		return list
	}
	list, _ := configuration[OriginsKey].([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
