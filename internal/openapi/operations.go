package openapi

// The operator's endpoints, and the tunnels of bp dev.

// notModified answers a conditional request (If-None-Match) for what the
// caller has.
var notModified = obj{"304": obj{"description": "what the caller has is current (If-None-Match, If-Modified-Since)"}}

var _ = describe(map[string]op{
	"getHealth": {summary: "Whether the server and its database answer",
		result: props(obj{"status": enum("ok"), "version": str}, "status", "version")},
	"getReadiness": {summary: "Whether this node can serve: its database and its file storage answer (for load balancers)",
		description: "503 ServiceUnavailable, naming what does not answer, otherwise (docs/operations.md).",
		result:      props(obj{"status": enum("ok"), "version": str}, "status", "version"), errs: []int{503}},
	"getMetrics": {summary: "The server's metrics, in the Prometheus text format",
		description: "Needs the bearer token of --metrics-token when one is set (docs/operations.md).",
		media:       "text/plain", result: str,
		other: obj{"401": obj{"description": "the token is missing or wrong", "content": obj{"text/plain": obj{"schema": str}}}}},
	"getOpenAPIDocument": {summary: "This document", result: object, other: notModified},
	"openTunnel": {summary: "The WebSocket tunnel of bp dev --tunnelUrl (docs/sdk-bots.md)",
		description: "A WebSocket upgrade: the tunnel carries what the platform sends the dev bot. A live connection holds its id: another is refused with 409.",
		status:      101, media: noBody, returns: "the connection is a WebSocket", errs: []int{400, 409, 410}},

	"openConsole": {summary: "The web console: a redirect to /console/", status: 301, media: noBody,
		returns: "Location: /console/"},
	"openRoot": {summary: "The server's address, opened in a browser: a redirect to the web console", status: 302, media: noBody,
		returns: "Location: /console/"},
	"getConsole": {summary: "The web console's page (docs/console.md)",
		description: "The console signs in with a personal access token kept in the browser's session storage and calls this API from the page.",
		media:       "text/html", result: str, other: notModified},
	"getWebchatScript": {summary: "The web chat's script, for any page (docs/webchat.md)",
		description: "Embed codes (getBotWebchat) load it; it is served with Access-Control-Allow-Origin: * and cached for an hour.",
		media:       "text/javascript", result: str, other: notModified},
	"getWebchatPage": {summary: "A bot's full-page chat, by its chat webhook id (getBotWebchat's sharableUrl)",
		description: "It may be framed only by the bot's allowed origins.",
		media:       "text/html", result: str, errs: []int{404}},
	"getOfficialWebchatFile": {summary: "A file of the official web chat (@botpress/webchat): inject.js, webchat.js, webchat.css or NOTICES.txt (the licences of what webchat.js holds)",
		description: "Served with Access-Control-Allow-Origin: * and cached for an hour.",
		media:       "*/*", result: str, errs: []int{404}, other: notModified},
	"getOfficialWebchatPage": {summary: "A bot's full page of the official web chat, by its chat webhook id (getBotWebchat with widget=official)",
		description: "It may be framed only by the bot's allowed origins.",
		media:       "text/html", result: str, errs: []int{404}},
	"getConsoleAsset": {summary: "A script, style sheet or licence of the web console",
		description: "Assets are served under a directory named after their content's hash (the path may hold slashes), cached for a year.",
		media:       "*/*", result: str, other: notModified},
})
