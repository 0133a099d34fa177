package main

// listUsageActivityDaily: AI Spend by day, bot and purpose.

import (
	"math"
	"net/url"
	"testing"
	"time"
)

type dailyOut struct {
	Data []struct {
		Key      string  `json:"key"`
		Date     string  `json:"date"`
		Value    float64 `json:"value"`
		Metadata struct {
			BotID   string `json:"botId"`
			Type    string `json:"type"`
			Subtype string `json:"subtype"`
		} `json:"metadata"`
	} `json:"data"`
	Meta struct {
		NextToken string `json:"nextToken"`
	} `json:"meta"`
}

func testAISpendDaily(t *testing.T, s *testServer) {
	owner := s.newWorkspace(t, "spend-daily")
	other := s.newWorkspace(t, "spend-daily-other")
	b1 := str(t, owner.createBot(map[string]any{"name": "one"}), "id")
	b2 := str(t, owner.createBot(map[string]any{"name": "two"}), "id")
	ob := str(t, other.createBot(nil), "id")

	record := aiUsageRecorder(t, s)
	d1 := time.Date(2025, 2, 10, 0, 0, 0, 0, time.UTC)
	d2 := d1.AddDate(0, 0, 1)
	record(owner.ws, b1, "summarization", 1_000_000_000, d1.Add(time.Hour))   // $1
	record(owner.ws, b1, "summarization", 250_000_000, d1.Add(23*time.Hour))  // $0.25, the same day
	record(owner.ws, b2, "search_rewriting", 10_000_000, d1.Add(2*time.Hour)) // $0.01
	record(owner.ws, b1, "vision_indexing", 3_000_000_000, d2)                // $3, the next day at midnight
	record(owner.ws, b1, "summarization", 7_000_000_000, d2.AddDate(0, 0, 1)) // the day after dateUntil
	record(other.ws, ob, "summarization", 42_000_000_000, d1.Add(time.Hour))  // another workspace
	now := time.Now().UTC()
	record(owner.ws, b2, "summarization", 500_000_000, now)                                                                         // today
	record(owner.ws, b2, "summarization", 900_000_000, time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).Add(-time.Hour)) // last month

	c := owner.in("")
	daily := func(id string, q url.Values) dailyOut {
		t.Helper()
		var out dailyOut
		c.get("/v1/admin/usages/" + id + "/daily-activity?" + q.Encode()).decode(&out)
		return out
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	type row struct {
		date, bot, purpose string
		value              float64
	}
	rows := func(out dailyOut) []row {
		var rs []row
		for _, d := range out.Data {
			if d.Metadata.Type != "FileIndexing" || d.Key != d.Date+"/"+d.Metadata.BotID+"/"+d.Metadata.Subtype {
				t.Errorf("item %+v: want type FileIndexing and key date/bot/purpose", d)
			}
			rs = append(rs, row{d.Date, d.Metadata.BotID, d.Metadata.Subtype, d.Value})
		}
		return rs
	}
	same := func(got, want []row, what string) {
		t.Helper()
		ok := len(got) == len(want)
		for i := 0; ok && i < len(got); i++ {
			ok = got[i].date == want[i].date && got[i].bot == want[i].bot && got[i].purpose == want[i].purpose && near(got[i].value, want[i].value)
		}
		if !ok {
			t.Errorf("%s: %+v; want %+v", what, got, want)
		}
	}
	span := url.Values{"type": {"ai_spend"}, "dateFrom": {"2025-02-10"}, "dateUntil": {"2025-02-11"}}
	want := []row{{"2025-02-10", b1, "summarization", 1.25}, {"2025-02-10", b2, "search_rewriting", 0.01}, {"2025-02-11", b1, "vision_indexing", 3}}
	if b1 > b2 {
		want[0], want[1] = want[1], want[0] // by bot within a day
	}
	same(rows(daily(owner.ws, span)), want, "two days of the workspace")
	same(rows(daily(b1, span)), []row{{"2025-02-10", b1, "summarization", 1.25}, {"2025-02-11", b1, "vision_indexing", 3}}, "two days of bot one")

	// Paged: one item a page, in the same order.
	var paged []row
	q := url.Values{"type": {"ai_spend"}, "dateFrom": {"2025-02-10T13:00:00Z"}, "dateUntil": {"2025-02-11"}, "pageSize": {"1"}}
	for i := 0; ; i++ {
		out := daily(owner.ws, q)
		paged = append(paged, rows(out)...)
		if out.Meta.NextToken == "" || i > 5 {
			break
		}
		q.Set("nextToken", out.Meta.NextToken)
	}
	same(paged, want, "two days a page at a time (dateFrom a date-time)")

	// By default: this month up to today.
	same(rows(daily(owner.ws, url.Values{"type": {"ai_spend"}})), []row{{now.Format(time.DateOnly), b2, "summarization", 0.5}}, "this month")

	// Refused: another type, bad dates, a range backwards or too long, a
	// stranger's workspace.
	bad := func(q string, status int, typ, field string) {
		t.Helper()
		c.get("/v1/admin/usages/"+owner.ws+"/daily-activity?"+q).fail(status, typ, field)
	}
	bad("", 400, "InvalidQuery", "type")
	bad("type=file_storage_bytes", 400, "InvalidQuery", "type")
	bad("type=ai_spend&dateFrom=yesterday", 400, "InvalidQuery", "dateFrom")
	bad("type=ai_spend&dateUntil=2025-13-01", 400, "InvalidQuery", "dateUntil")
	bad("type=ai_spend&dateFrom=2025-02-11&dateUntil=2025-02-10", 400, "InvalidQuery", "dateUntil")
	bad("type=ai_spend&dateFrom=2024-01-01&dateUntil=2025-02-10", 400, "InvalidQuery", "dateFrom")
	bad("type=ai_spend&nextToken=x", 400, "InvalidQuery", "nextToken")
	bad("type=ai_spend&pageSize=0", 400, "InvalidQuery", "pageSize")
	stranger := s.as(t, s.issueToken(t, uniqueEmail("daily-stranger")), "")
	stranger.get("/v1/admin/usages/"+owner.ws+"/daily-activity?type=ai_spend").fail(404, "ResourceNotFound")
	stranger.get("/v1/admin/usages/"+b1+"/daily-activity?type=ai_spend").fail(404, "ResourceNotFound", b1)
}
