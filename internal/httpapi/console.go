package httpapi

import "net/http"

// consoleRoutes serves the web console (docs/console.md): a page and its
// assets, which call the public APIs from the browser like any client.
func consoleRoutes(console http.Handler) *table {
	t := newTable("Console")
	t.handle("GET /console", "openConsole", nil, console)
	t.serve("GET /console/{$}", t.op("GET /console/", "getConsole", nil, console))
	t.serve("GET /console/{asset...}", t.op("GET /console/{asset}", "getConsoleAsset", nil, console))
	return t
}
