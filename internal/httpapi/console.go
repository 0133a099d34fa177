package httpapi

import "net/http"

// consoleRoutes serves the web console (docs/console.md): a page and its
// assets, which call the public APIs from the browser like any client. The
// server's root leads there: it is what a person opening the address sees.
func consoleRoutes(console http.Handler) *table {
	t := newTable("Console")
	t.serve("GET /{$}", t.op("GET /", "openRoot", nil, http.RedirectHandler("/console/", http.StatusFound)))
	t.handle("GET /console", "openConsole", nil, console)
	t.serve("GET /console/{$}", t.op("GET /console/", "getConsole", nil, console))
	t.serve("GET /console/{asset...}", t.op("GET /console/{asset}", "getConsoleAsset", nil, console))
	return t
}
