package botruntime

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Preview renders a payload as plain text (event.preview): a text message's
// text, and a readable line or lines for the other message types. Other
// payloads (custom events) are their JSON.
func Preview(payload json.RawMessage) string {
	var p map[string]any
	if json.Unmarshal(payload, &p) != nil || p == nil {
		return string(payload)
	}
	if s := preview(p); s != "" {
		return s
	}
	return string(payload)
}

func preview(p map[string]any) string {
	str := func(k string) string { s, _ := p[k].(string); return s }
	items := func() []map[string]any {
		arr, _ := p["items"].([]any)
		var out []map[string]any
		for _, it := range arr {
			if m, ok := it.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	labeled := func(kind, url, title string) string {
		if title != "" {
			return fmt.Sprintf("[%s] %s %s", kind, title, url)
		}
		return fmt.Sprintf("[%s] %s", kind, url)
	}
	switch str("type") {
	case "text":
		return str("text")
	case "markdown":
		return str("markdown")
	case "image":
		return labeled("image", str("imageUrl"), str("title"))
	case "audio":
		return labeled("audio", str("audioUrl"), str("title"))
	case "video":
		return labeled("video", str("videoUrl"), str("title"))
	case "file":
		return labeled("file", str("fileUrl"), str("title"))
	case "location":
		place := strings.TrimSpace(str("title") + " " + str("address"))
		lat, _ := p["latitude"].(float64)
		lon, _ := p["longitude"].(float64)
		if place != "" {
			return fmt.Sprintf("[location] %s (%g, %g)", place, lat, lon)
		}
		return fmt.Sprintf("[location] %g, %g", lat, lon)
	case "card":
		return card(p)
	case "carousel":
		var lines []string
		for _, it := range items() {
			lines = append(lines, card(it))
		}
		return strings.Join(lines, "\n")
	case "choice", "dropdown":
		lines := []string{str("text")}
		opts, _ := p["options"].([]any)
		for _, o := range opts {
			if m, ok := o.(map[string]any); ok {
				l, _ := m["label"].(string)
				lines = append(lines, "- "+l)
			}
		}
		return strings.Join(lines, "\n")
	case "bloc":
		var lines []string
		for _, it := range items() {
			lines = append(lines, preview(it))
		}
		return strings.Join(lines, "\n")
	}
	return ""
}

func card(p map[string]any) string {
	title, _ := p["title"].(string)
	line := "[card] " + title
	if sub, _ := p["subtitle"].(string); sub != "" {
		line += " — " + sub
	}
	acts, _ := p["actions"].([]any)
	var labels []string
	for _, a := range acts {
		if m, ok := a.(map[string]any); ok {
			if l, _ := m["label"].(string); l != "" {
				labels = append(labels, l)
			}
		}
	}
	if len(labels) > 0 {
		line += " [" + strings.Join(labels, " | ") + "]"
	}
	return line
}
