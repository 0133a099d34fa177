// Package plans is the one table of the plans a workspace may be on: their
// names, the default storage limits each sets, whether each includes the
// AI-assisted indexing options, and which plan a new workspace gets. It
// imports nothing, so any service may read it.
package plans

// Plan is what a workspace's plan sets (docs/admin-api.md#plans).
type Plan struct {
	Name string
	// Default storage limits in bytes; a workspace may override each.
	MaxFile, MaxStorage, MaxVector int64
	// MaxTableRows bounds the rows of the workspace's bots' tables, each
	// counted factor times (docs/tables.md#quota).
	MaxTableRows int64
	// IncludesAI: the Team/Enterprise-only AI-assisted indexing options
	// (smart cleanup, summarization, vision). Agent parsing is on every
	// plan.
	IncludesAI bool
}

const (
	gib = int64(1) << 30
	tib = int64(1) << 40
)

// Default is the plan of a new workspace; its limits also apply to a plan
// this server does not know.
const Default = "community"

// All lists the plans, cheapest first (limits: docs/files-api.md).
var All = []Plan{
	{Name: "community", MaxFile: 2 * gib, MaxStorage: 10 * gib, MaxVector: 1 * gib, MaxTableRows: 100_000},
	{Name: "team", MaxFile: 5 * gib, MaxStorage: 100 * gib, MaxVector: 10 * gib, MaxTableRows: 1_000_000, IncludesAI: true},
	{Name: "enterprise", MaxFile: 10 * gib, MaxStorage: 1 * tib, MaxVector: 100 * gib, MaxTableRows: 10_000_000, IncludesAI: true},
}

// Names lists the plans' names, cheapest first.
func Names() []string {
	names := make([]string, len(All))
	for i, p := range All {
		names[i] = p.Name
	}
	return names
}

// Get returns the plan called name, and whether there is one.
func Get(name string) (Plan, bool) {
	for _, p := range All {
		if p.Name == name {
			return p, true
		}
	}
	return Plan{}, false
}

// Of returns the plan called name, or the Default plan when there is none.
func Of(name string) Plan {
	if p, ok := Get(name); ok {
		return p
	}
	p, _ := Get(Default)
	return p
}
