package tables_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/sqlstore"
	"github.com/botplatform/botplatform/internal/store/storetest"
	"github.com/botplatform/botplatform/internal/tables"
)

// BenchmarkFindTableRows measures findTableRows (the service, its filter
// checked and turned into SQL, and the query) with a filter on two columns
// and an order on a third over a table of 100,000 rows, on each database.
// Each op is one find of a page of 50; p50 and p99 are of the ops.
//
//	BOTPLATFORM_TEST_DATABASE_URL=… go test -run '^$' -bench FindTableRows -benchtime 1000x ./internal/tables/
func BenchmarkFindTableRows(b *testing.B) {
	for _, backend := range storetest.Backends {
		b.Run(backend, func(b *testing.B) {
			st := storetest.Open(b, backend)
			svc, botID, table := benchTable(b, st, 100_000)
			filter := json.RawMessage(`{"city": "city7", "age": {"$gte": 30}}`)
			limit := 50.0
			in := tables.FindInput{Filter: filter, OrderBy: "score", OrderDirection: "desc", Limit: &limit}
			ctx := context.Background()
			f, err := svc.FindRows(ctx, botID, table, in)
			if err != nil || len(f.Rows) != 50 || !f.HasMore {
				b.Fatalf("find: %d rows, more %v, %v", len(f.Rows), f.HasMore, err)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if _, err := svc.FindRows(ctx, botID, table, in); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(lat)
			at := func(p float64) float64 { return float64(lat[int(float64(len(lat)-1)*p)].Microseconds()) }
			b.ReportMetric(at(0.5), "p50-µs")
			b.ReportMetric(at(0.99), "p99-µs")
		})
	}
}

// benchTable makes a bot with a table of n rows: city (100 values), age
// (0–99), score (a number), name.
func benchTable(b *testing.B, st *sqlstore.Store, n int) (*tables.Service, string, string) {
	ctx := context.Background()
	now := time.Now()
	acc := platform.Account{ID: platform.NewID(platform.PrefixAccount), Email: "bench@example.com", CreatedAt: now}
	ws := platform.Workspace{ID: platform.NewID(platform.PrefixWorkspace), Name: "bench", OwnerID: acc.ID, Plan: "community", BillingVersion: "v4", CreatedAt: now, UpdatedAt: now}
	m := platform.Member{ID: platform.NewID(platform.PrefixMember), WorkspaceID: ws.ID, AccountID: acc.ID, Email: acc.Email, Role: platform.RoleOwner, CreatedAt: now}
	bot := platform.Bot{ID: platform.NewID(platform.PrefixBot), WorkspaceID: ws.ID, Name: "bench", Type: "studio", Status: "active",
		SigningSecret: "s", Tags: map[string]string{}, CreatedAt: now, UpdatedAt: now}
	for _, err := range []error{st.CreateAccount(ctx, acc), st.CreateWorkspace(ctx, ws, m), st.CreateBot(ctx, bot)} {
		if err != nil {
			b.Fatal(err)
		}
	}
	svc := tables.New(st, nil, platform.SystemClock{})
	name := "BenchTable"
	schema := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"city":{"type":"string"},"age":{"type":"number"},"score":{"type":"number"}}}`)
	if _, err := svc.CreateTable(ctx, bot.ID, tables.TableInput{Name: &name, Schema: schema}); err != nil {
		b.Fatal(err)
	}
	const batch = 1000
	for i := 0; i < n; i += batch {
		rows := make([]json.RawMessage, 0, batch)
		for j := i; j < i+batch && j < n; j++ {
			rows = append(rows, json.RawMessage(fmt.Sprintf(`{"name":"row %d","city":"city%d","age":%d,"score":%d}`, j, j%100, (j/100)%100, (j*7919)%100003)))
		}
		if _, _, err := svc.CreateRows(ctx, bot.ID, name, rows); err != nil {
			b.Fatal(err)
		}
	}
	return svc, bot.ID, name
}
