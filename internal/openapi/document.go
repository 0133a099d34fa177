package openapi

// The document's objects, and the small vocabulary the descriptions of
// operations are written in.

type obj = map[string]any

type document struct {
	OpenAPI    string                           `json:"openapi"`
	Info       obj                              `json:"info"`
	Tags       []obj                            `json:"tags"`
	Paths      map[string]map[string]*operation `json:"paths"`
	Components obj                              `json:"components"`
}

type operation struct {
	ID          string                `json:"operationId"`
	Summary     string                `json:"summary,omitempty"`
	Description string                `json:"description,omitempty"`
	Tags        []string              `json:"tags"`
	Parameters  []parameter           `json:"parameters,omitempty"`
	RequestBody *requestBody          `json:"requestBody,omitempty"`
	Responses   map[string]any        `json:"responses"`
	Security    []map[string][]string `json:"security,omitempty"`
}

type parameter struct {
	Name        string `json:"name"`
	In          string `json:"in"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
	Schema      any    `json:"schema"`
}

type requestBody struct {
	Required bool             `json:"required"`
	Content  map[string]media `json:"content"`
}

type media struct {
	Schema any `json:"schema,omitempty"`
}

// op describes an operation beyond what its route says.
type op struct {
	summary     string
	description string
	params      []parameter // query parameters and request headers
	raw         bool        // the request body is raw bytes, not JSON
	status      int         // of success; 200 when 0
	returns     string      // what the successful response is
	result      any         // its JSON Schema
	media       string      // its media type when not JSON; noBody for none
	headers     obj         // its headers
	errs        []int       // error statuses beyond those the route implies
	other       obj         // other responses by status, as they are (over any of the above)
}

const noBody = "-"

// descriptions are the operations the server has, by operationId; each
// surface's file adds its own.
var descriptions = map[string]op{}

func describe(ops map[string]op) bool {
	for id, d := range ops {
		if _, dup := descriptions[id]; dup {
			panic("openapi: operation " + id + " described twice")
		}
		descriptions[id] = d
	}
	return true
}

// JSON Schemas.
var (
	str     = obj{"type": "string"}
	integer = obj{"type": "integer"}
	number  = obj{"type": "number"}
	boolean = obj{"type": "boolean"}
	object  = obj{"type": "object"}
	empty   = obj{"type": "object", "maxProperties": 0}
	// date is an ISO 8601 date and time in UTC.
	date = obj{"type": "string", "format": "date-time"}
)

func array(items any) obj { return obj{"type": "array", "items": items} }

func enum(v ...string) obj { return obj{"type": "string", "enum": v} }

func nullable(s obj) obj { return obj{"anyOf": []any{s, obj{"type": "null"}}} }

func mapOf(v any) obj { return obj{"type": "object", "additionalProperties": v} }

func ref(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

// object with props, of which required are always there. Other
// properties may appear: clients must ignore what they do not know.
func props(p obj, required ...string) obj {
	o := obj{"type": "object", "properties": p}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// wrap is {key: s}, key required.
func wrap(key string, s any) obj { return props(obj{key: s}, key) }

// list is a page of a list: {key: [items], meta: {nextToken?}}.
func list(key string, items any) obj {
	return props(obj{key: array(items), "meta": ref("Meta")}, key, "meta")
}

// Parameters.

func query(name string, schema any, desc string) parameter {
	return parameter{Name: name, In: "query", Schema: schema, Description: desc}
}

func required(p parameter) parameter { p.Required = true; return p }

func header(name, desc string) parameter {
	return parameter{Name: name, In: "header", Schema: str, Description: desc}
}

// page are the parameters of a page of a list.
var page = []parameter{
	query("nextToken", str, "the meta.nextToken of the previous page"),
	query("pageSize", obj{"type": "integer", "minimum": 1}, "how many items a page has at most"),
}

// tagFilter is a tag filter, as tags.<key>=<value> or URL-encoded JSON.
var tagFilter = query("tags", str, "only those with these tags: tags.<key>=<value> parameters (repeated for any of several values), "+
	"or a URL-encoded JSON object {\"<key>\": value or [values]}")

// with returns ps and more as one list.
func with(ps []parameter, more ...parameter) []parameter {
	return append(append([]parameter{}, ps...), more...)
}
