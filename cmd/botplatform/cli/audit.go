package cli

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"text/tabwriter"
)

// record is an audit record as getAuditRecords answers it.
type record struct {
	ID           string  `json:"id"`
	RecordedAt   string  `json:"recordedAt"`
	UserID       *string `json:"userId"`
	UserEmail    *string `json:"userEmail,omitempty"`
	ResourceID   *string `json:"resourceId"`
	ResourceName *string `json:"resourceName,omitempty"`
	Action       string  `json:"action"`
	Value        *string `json:"value,omitempty"`
}

func auditFlags(fs *flag.FlagSet, e *env) {
	fs.IntVar(&e.opts.limit, "limit", 50, "how many records, newest first")
}

// auditList prints the workspace's newest audit records.
func auditList(ctx context.Context, e *env, _ []string) error {
	if e.opts.limit < 1 {
		return Usagef("--limit: want a number of records of at least 1, got %d", e.opts.limit)
	}
	var recs []record
	q := url.Values{"pageSize": {fmt.Sprint(min(e.opts.limit, 1000))}}
	for len(recs) < e.opts.limit {
		var page struct {
			Records []record `json:"records"`
			Meta    struct {
				NextToken string `json:"nextToken"`
			} `json:"meta"`
		}
		if err := e.cl.do(ctx, call{method: "GET", path: "/v1/admin/workspaces/" + esc(e.cl.workspaceID) + "/audit-records", query: q, out: &page}); err != nil {
			return err
		}
		recs = append(recs, page.Records...)
		if page.Meta.NextToken == "" {
			break
		}
		q.Set("nextToken", page.Meta.NextToken)
	}
	recs = recs[:min(len(recs), e.opts.limit)]
	if e.json {
		return e.printJSON(map[string]any{"records": recs})
	}
	tw := tabwriter.NewWriter(e.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WHEN\tWHO\tACTION\tRESOURCE\tVALUE")
	for _, r := range recs {
		who := "(server)"
		if r.UserEmail != nil && *r.UserEmail != "" {
			who = *r.UserEmail
		} else if r.UserID != nil {
			who = *r.UserID
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.RecordedAt, who, r.Action, deref(r.ResourceName, deref(r.ResourceID, "")), deref(r.Value, ""))
	}
	return tw.Flush()
}

func deref(s *string, def string) string {
	if s == nil || *s == "" {
		return def
	}
	return *s
}
