package storetest

import (
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

func testKnowledgeBases(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")
	other := e.bot(t, w.ID, "other")
	now := mt(e.now())
	kb := func(bot platform.Bot, name string, tags map[string]string) platform.KnowledgeBase {
		k := platform.KnowledgeBase{ID: platform.NewID("kb_"), BotID: bot.ID, Name: name, Tags: tags, CreatedAt: now, UpdatedAt: now}
		must(t, e.s.CreateKnowledgeBase(e.ctx, k), "CreateKnowledgeBase %s", name)
		return k
	}
	k1 := kb(b, "one", map[string]string{"lang": "en", "team": "cx"})
	k2 := kb(b, "two", map[string]string{"lang": "fr"})
	k3 := kb(b, "three", map[string]string{})
	kb(other, "theirs", map[string]string{"lang": "en"})

	got, err := e.s.GetKnowledgeBase(e.ctx, b.ID, k1.ID)
	must(t, err, "GetKnowledgeBase")
	same(t, got, k1, "GetKnowledgeBase")
	_, err = e.s.GetKnowledgeBase(e.ctx, other.ID, k1.ID)
	wantErr(t, err, platform.ErrNotFound, "GetKnowledgeBase of another bot")

	var ids []string
	tok := ""
	for {
		page, next, err := e.s.ListKnowledgeBases(e.ctx, b.ID, nil, store.Page{Limit: 2, Token: tok})
		must(t, err, "ListKnowledgeBases")
		for _, k := range page {
			ids = append(ids, k.ID)
		}
		if next == "" {
			break
		}
		tok = next
	}
	sortByID(ids, func(s string) string { return s })
	want := []string{k1.ID, k2.ID, k3.ID}
	sortByID(want, func(s string) string { return s })
	same(t, ids, want, "every knowledge base of the bot, by id")
	en, _, err := e.s.ListKnowledgeBases(e.ctx, b.ID, map[string][]string{"lang": {"en", "de"}}, store.Page{Limit: 10})
	must(t, err, "ListKnowledgeBases tagged")
	if len(en) != 1 || en[0].ID != k1.ID || en[0].Tags["team"] != "cx" {
		t.Fatalf("ListKnowledgeBases lang=en: %+v", en)
	}

	k1.Name, k1.Tags, k1.UpdatedAt = "renamed", map[string]string{"lang": "de"}, now.Add(time.Microsecond)
	must(t, e.s.UpdateKnowledgeBase(e.ctx, k1), "UpdateKnowledgeBase")
	got, _ = e.s.GetKnowledgeBase(e.ctx, b.ID, k1.ID)
	if got.Name != "renamed" || len(got.Tags) != 1 || got.Tags["lang"] != "de" {
		t.Fatalf("after UpdateKnowledgeBase: %+v", got)
	}
	wantErr(t, e.s.UpdateKnowledgeBase(e.ctx, platform.KnowledgeBase{ID: "kb_missing", BotID: b.ID, Name: "x"}), platform.ErrNotFound, "UpdateKnowledgeBase of an unknown id")

	must(t, e.s.DeleteKnowledgeBase(e.ctx, b.ID, k2.ID), "DeleteKnowledgeBase")
	wantErr(t, e.s.DeleteKnowledgeBase(e.ctx, b.ID, k2.ID), platform.ErrNotFound, "DeleteKnowledgeBase twice")
	wantErr(t, e.s.DeleteKnowledgeBase(e.ctx, other.ID, k1.ID), platform.ErrNotFound, "DeleteKnowledgeBase of another bot's")

	// Deleting the bot deletes its knowledge bases.
	_, err = e.s.DeleteBot(e.ctx, w.ID, b.ID)
	must(t, err, "DeleteBot")
	if left, _, _ := e.s.ListKnowledgeBases(e.ctx, b.ID, nil, store.Page{Limit: 10}); len(left) != 0 {
		t.Fatalf("knowledge bases left after deleting the bot: %v", left)
	}
}
