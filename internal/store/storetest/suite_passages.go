package storetest

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
	"github.com/botplatform/botplatform/internal/words"
)

// indexedFile stores an indexed file of b with its content uploaded
// (indexing_pending), tagged with tags.
func (e *env) indexedFile(t *testing.T, b platform.Bot, scope, key string, tags map[string]string) platform.File {
	t.Helper()
	f := e.newFile(b, scope, key)
	f.Index = true
	if tags != nil {
		f.Tags = tags
	}
	f = e.putFile(t, f)
	return e.complete(t, f, e.upload(f, 100))
}

// IndexableFile creates an account, a workspace, a bot and a file of it
// waiting to be indexed, for tests of one backend outside the suite: its
// passages are stored with CompleteIndexing(ctx, f.ID, f.Generation, …).
func IndexableFile(t *testing.T, s store.Store) platform.File {
	t.Helper()
	e := &env{s: s, ctx: t.Context(), clock: platform.NewManualClock(t0)}
	w, _ := e.workspace(t, e.account(t, "a"))
	return e.indexedFile(t, e.bot(t, w.ID, "b"), "", "file.md", nil)
}

// Passage is a passage of f at pos.
func Passage(f platform.File, pos int, content string) platform.Passage {
	return passage(f, pos, content)
}

func passage(f platform.File, pos int, content string, vec ...float32) platform.Passage {
	return platform.Passage{ID: platform.NewID("psg_"), FileID: f.ID, BotID: f.BotID, Position: pos, Content: content,
		Type: platform.PassageChunk, Subtype: "paragraph", PageNumber: pos + 1, Breadcrumb: []string{"Doc", "Part"}, Vector: vec}
}

func testPassages(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")
	other := e.bot(t, w.ID, "other")
	f := e.indexedFile(t, b, "", "guide.md", map[string]string{"lang": "en"})
	g := e.indexedFile(t, b, "", "faq.md", map[string]string{"lang": "fr"})
	h := e.indexedFile(t, b, "integration-x", "private.md", nil)
	o := e.indexedFile(t, other, "", "guide.md", nil)

	// Nothing is searchable before indexing completes.
	all := store.FileVisibility{BotID: b.ID, All: true}
	if ids, err := e.s.SearchableFiles(e.ctx, all, nil, nil, nil); err != nil || len(ids) != 0 {
		t.Fatalf("SearchableFiles before indexing: %v, %v", ids, err)
	}

	// CompleteIndexing stores passages and marks the file indexed.
	fps := []platform.Passage{
		passage(f, 0, "Refunds are processed within five days", 1, 0),
		passage(f, 1, "Shipping takes two weeks to arrive", 0, 1),
		passage(f, 2, "Contact support by email for refunds", 0.6, 0.8),
	}
	must(t, e.s.CompleteIndexing(e.ctx, f.ID, f.Generation, "v2", fps, e.now()), "CompleteIndexing f")
	must(t, e.s.CompleteIndexing(e.ctx, g.ID, g.Generation, "v1", []platform.Passage{passage(g, 0, "Les remboursements refunds prennent cinq jours", 1, 0)}, e.now()), "CompleteIndexing g")
	must(t, e.s.CompleteIndexing(e.ctx, h.ID, h.Generation, "v2", []platform.Passage{passage(h, 0, "private refunds note", 1, 0)}, e.now()), "CompleteIndexing h")
	must(t, e.s.CompleteIndexing(e.ctx, o.ID, o.Generation, "v2", []platform.Passage{passage(o, 0, "refunds of another bot", 1, 0)}, e.now()), "CompleteIndexing o")
	got := e.getFile(t, f.ID)
	if got.Status != platform.FileIndexCompleted || got.IndexingStack != "v2" || got.FailedReason != "" {
		t.Fatalf("after CompleteIndexing: status %q stack %q reason %q", got.Status, got.IndexingStack, got.FailedReason)
	}
	if got := e.getFile(t, g.ID); got.IndexingStack != "v1" {
		t.Fatalf("indexing stack %q, want v1", got.IndexingStack)
	}

	// A stale generation is a conflict and changes nothing.
	err := e.s.CompleteIndexing(e.ctx, f.ID, f.Generation+1, "v2", nil, e.now())
	wantErr(t, err, platform.ErrConflict, "CompleteIndexing of a stale generation")
	wantErr(t, e.s.FailIndexing(e.ctx, f.ID, f.Generation+1, "x", e.now()), platform.ErrConflict, "FailIndexing of a stale generation")

	// ListPassages pages through a file's passages in order.
	p1, next, err := e.s.ListPassages(e.ctx, f.ID, store.Page{Limit: 2})
	must(t, err, "ListPassages page 1")
	if len(p1) != 2 || p1[0].Content != fps[0].Content || p1[1].Position != 1 || next == "" {
		t.Fatalf("ListPassages page 1: %v next %q", p1, next)
	}
	if p1[0].Subtype != "paragraph" || p1[0].PageNumber != 1 || p1[0].Type != platform.PassageChunk || len(p1[0].Breadcrumb) != 2 {
		t.Fatalf("passage fields not kept: %+v", p1[0])
	}
	p2, next, err := e.s.ListPassages(e.ctx, f.ID, store.Page{Limit: 2, Token: next})
	must(t, err, "ListPassages page 2")
	if len(p2) != 1 || p2[0].Position != 2 || next != "" {
		t.Fatalf("ListPassages page 2: %v next %q", p2, next)
	}

	// Full-text search: visible files only, tag filters.
	seqs, err := e.search(all, nil, nil, "refunds email")
	must(t, err, "search")
	ps, err := e.s.PassagesBySeq(e.ctx, seqs)
	must(t, err, "PassagesBySeq")
	byContent := map[string]bool{}
	for _, p := range ps {
		byContent[p.Content] = true
		if p.BotID != b.ID {
			t.Fatalf("search returned another bot's passage %q", p.Content)
		}
	}
	for _, want := range []string{fps[0].Content, fps[2].Content, "private refunds note", "Les remboursements refunds prennent cinq jours"} {
		if !byContent[want] {
			t.Fatalf("search missed %q (got %v)", want, byContent)
		}
	}
	if byContent[fps[1].Content] {
		t.Fatalf("search returned a passage without the words")
	}
	scoped := store.FileVisibility{BotID: b.ID, Scope: "integration-y"}
	seqs, err = e.search(scoped, map[string][]string{"lang": {"en"}}, nil, "refunds")
	must(t, err, "search scoped and tagged")
	if len(seqs) != 0 {
		t.Fatalf("an integration sees unshared files of the bot: %v", seqs)
	}
	seqs, err = e.search(all, map[string][]string{"lang": {"en"}}, nil, "refunds")
	must(t, err, "search tagged")
	if ps, _ := e.s.PassagesBySeq(e.ctx, seqs); len(ps) != 2 || ps[0].FileID != f.ID || ps[1].FileID != f.ID {
		t.Fatalf("search lang=en: %v", ps)
	}
	seqs, err = e.search(all, nil, map[string][]string{"lang": {"en"}}, "refunds")
	must(t, err, "search not tagged")
	for _, p := range mustPassages(t, e, seqs) {
		if p.FileID == f.ID {
			t.Fatalf("search not lang=en returned %q", p.Content)
		}
	}
	if seqs, err := e.search(all, nil, nil, "  !!! "); err != nil || len(seqs) != 0 {
		t.Fatalf("search of no words: %v %v", seqs, err)
	}
	if seqs, err := e.search(all, nil, nil, `"quote" OR NEAR(x) -y* col:z`); err != nil {
		t.Fatalf("search with query syntax characters: %v %v", seqs, err)
	}

	// Searchable files, vectors and stats.
	ids, err := e.s.SearchableFiles(e.ctx, all, nil, nil, nil)
	must(t, err, "SearchableFiles")
	if len(ids) != 3 {
		t.Fatalf("SearchableFiles: %v", ids)
	}
	if among, err := e.s.SearchableFiles(e.ctx, all, nil, nil, []string{f.ID, "file_unknown", o.ID}); err != nil || len(among) != 1 || among[0] != f.ID {
		t.Fatalf("SearchableFiles among three (the bot's, an unknown one, another bot's): %v, %v", among, err)
	}
	if among, err := e.s.SearchableFiles(e.ctx, all, map[string][]string{"lang": {"en"}}, nil, []string{f.ID, g.ID}); err != nil || len(among) != 1 || among[0] != f.ID {
		t.Fatalf("SearchableFiles among two, tagged lang=en: %v, %v", among, err)
	}
	if among, err := e.s.SearchableFiles(e.ctx, all, nil, nil, []string{}); err != nil || len(among) != 0 {
		t.Fatalf("SearchableFiles among none: %v, %v", among, err)
	}
	maxSeq, count, changes, err := e.s.PassageStats(e.ctx, b.ID)
	must(t, err, "PassageStats")
	if count != 5 || maxSeq == 0 || changes == 0 {
		t.Fatalf("PassageStats: max %d count %d changes %d", maxSeq, count, changes)
	}
	if m, n, c, err := e.s.PassageStats(e.ctx, "bot_none"); err != nil || m != 0 || n != 0 || c != 0 {
		t.Fatalf("PassageStats of a bot without passages: %d %d %d %v", m, n, c, err)
	}
	vs, err := e.s.PassageVectors(e.ctx, b.ID, 0, maxSeq)
	must(t, err, "PassageVectors")
	if len(vs) != 5 || len(vs[0].Vector) != 2 || vs[0].Vector[0] != 1 || vs[0].FileID != f.ID {
		t.Fatalf("PassageVectors: %+v", vs)
	}
	if vs[4].Seq != maxSeq {
		t.Fatalf("PassageStats: max %d, the newest passage is %d", maxSeq, vs[4].Seq)
	}
	if later, _ := e.s.PassageVectors(e.ctx, b.ID, vs[2].Seq, maxSeq); len(later) != 2 {
		t.Fatalf("PassageVectors after a seq: %d, want 2", len(later))
	}
	if between, _ := e.s.PassageVectors(e.ctx, b.ID, vs[0].Seq, vs[2].Seq); len(between) != 2 || between[1].Seq != vs[2].Seq {
		t.Fatalf("PassageVectors between two seqs: %+v", between)
	}
	around, err := e.s.PassagesAround(e.ctx, f.ID, 0, 1)
	must(t, err, "PassagesAround")
	if len(around) != 2 || around[1].Position != 1 {
		t.Fatalf("PassagesAround: %v", around)
	}

	// Indexing again replaces the passages (and the full-text index), and
	// the stats follow: the count, the newest seq, a change.
	before, _, _ := e.s.ListPassages(e.ctx, f.ID, store.Page{Limit: 10})
	must(t, e.s.CompleteIndexing(e.ctx, f.ID, f.Generation, "v2", []platform.Passage{passage(f, 0, "Completely new text", 1, 0)}, e.now()), "CompleteIndexing again")
	ps, _, _ = e.s.ListPassages(e.ctx, f.ID, store.Page{Limit: 10})
	if len(ps) != 1 {
		t.Fatalf("passages after indexing again: %d, want 1", len(ps))
	}
	m2, n2, c2, err := e.s.PassageStats(e.ctx, b.ID)
	must(t, err, "PassageStats after indexing again")
	if n2 != count-len(before)+1 || m2 != ps[0].Seq || c2 <= changes {
		t.Fatalf("PassageStats after indexing again: max %d count %d changes %d; want max %d count %d changes > %d", m2, n2, c2, ps[0].Seq, count-len(before)+1, changes)
	}
	seqs, _ = e.search(all, nil, nil, "shipping")
	if len(seqs) != 0 {
		t.Fatalf("replaced passages still found by full-text search")
	}

	// FailIndexing records the reason.
	must(t, e.s.FailIndexing(e.ctx, g.ID, g.Generation, "files of type image/png cannot be indexed", e.now()), "FailIndexing")
	if got := e.getFile(t, g.ID); got.Status != platform.FileIndexFailed || got.FailedReason != "files of type image/png cannot be indexed" {
		t.Fatalf("after FailIndexing: %q %q", got.Status, got.FailedReason)
	}
	if seqs, _ := e.search(all, nil, nil, "remboursements"); len(seqs) != 0 {
		t.Fatalf("a file whose indexing failed is searched")
	}
	if ps, _, _ := e.s.ListPassages(e.ctx, g.ID, store.Page{Limit: 10}); len(ps) != 0 {
		t.Fatalf("a file whose indexing failed kept %d passages", len(ps))
	}

	// QueueIndexing sets the file pending and queues a job.
	must(t, e.s.QueueIndexing(e.ctx, f.ID, []byte(`{"fileId":"`+f.ID+`","own":true}`), e.now()), "QueueIndexing")
	if got := e.getFile(t, f.ID); got.Status != platform.FileIndexPending {
		t.Fatalf("after QueueIndexing: %q", got.Status)
	}
	if js := e.jobs(t, f.ID); len(js) < 1 || js[len(js)-1].Kind != platform.JobIndexFile {
		t.Fatalf("QueueIndexing queued %v", js)
	}

	// Deleting a file deletes its passages, from the full-text index too.
	_, err = e.s.DeleteFile(e.ctx, b.ID, h.ID)
	must(t, err, "DeleteFile")
	if _, n, c, _ := e.s.PassageStats(e.ctx, b.ID); n != 1 || c <= c2 {
		t.Fatalf("passages after deleting a file: %d (changes %d after %d), want 1", n, c, c2)
	}
	if seqs, _ := e.search(all, nil, nil, "private"); len(seqs) != 0 {
		t.Fatalf("a deleted file's passage is still found")
	}
}

// search returns the seqs of the passages TextCandidates finds for query
// (budget 1000), in order of storage.
func (e *env) search(v store.FileVisibility, tags, notTags map[string][]string, query string) ([]int64, error) {
	ps, err := e.s.TextCandidates(e.ctx, v, tags, notTags, words.Query(query), nil, 1000)
	var seqs []int64
	for _, p := range ps {
		seqs = append(seqs, p.Seq)
	}
	slices.Sort(seqs)
	return seqs, err
}

func mustPassages(t *testing.T, e *env, seqs []int64) []platform.Passage {
	t.Helper()
	ps, err := e.s.PassagesBySeq(e.ctx, seqs)
	if err != nil && !errors.Is(err, platform.ErrNotFound) {
		t.Fatalf("PassagesBySeq: %v", err)
	}
	return ps
}

// testPassageHeadings: full-text search sees a passage's heading path as a
// field beside its content: the words of its headings find it.
func testPassageHeadings(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")
	f := e.indexedFile(t, b, "", "returns.md", nil)
	ps := []platform.Passage{
		passage(f, 0, "Bought at a reduced price? You can exchange it within 14 days."),
		passage(f, 1, "Send it back within 30 days for a full refund."),
		passage(f, 2, "Our summer sale ends on Sunday."),
	}
	ps[0].Breadcrumb = []string{"Returns", "Sale items"}
	ps[1].Breadcrumb = []string{"Returns", "Full-price items"}
	ps[2].Breadcrumb = []string{"News"}
	must(t, e.s.CompleteIndexing(e.ctx, f.ID, f.Generation, "v2", ps, e.now()), "CompleteIndexing")
	all := store.FileVisibility{BotID: b.ID, All: true}
	seqs, err := e.search(all, nil, nil, "sale")
	must(t, err, "search sale")
	var found []string
	for _, p := range mustPassages(t, e, seqs) {
		found = append(found, p.Content)
	}
	slices.Sort(found)
	if want := []string{ps[0].Content, ps[2].Content}; !slices.Equal(found, want) {
		t.Fatalf("search \"sale\": %q, want the passage saying it and the one under the heading", found)
	}
	seqs, err = e.search(all, nil, nil, "returns")
	must(t, err, "search returns")
	if len(seqs) != 2 {
		t.Fatalf("search \"returns\" found %d passages, want the 2 under the heading", len(seqs))
	}
}

// testPassagesMany: a file of many passages (several statements' worth,
// and a part of one) is stored whole and in order, headings without a
// vector; a word first counted as absent is found once passages hold it,
// and a search after a re-index finds the new passages only.
func testPassagesMany(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	b := e.bot(t, w.ID, "b")
	f := e.indexedFile(t, b, "", "big.md", nil)
	all := store.FileVisibility{BotID: b.ID, All: true}
	if seqs, err := e.search(all, nil, nil, "quokka"); err != nil || len(seqs) != 0 {
		t.Fatalf("search before indexing: %v %v", seqs, err)
	}
	const n = 1337
	ps := make([]platform.Passage, n)
	for i := range ps {
		if i%10 == 0 {
			ps[i] = passage(f, i, fmt.Sprintf("Heading %d", i))
			ps[i].Subtype = "title"
			ps[i].Vector = nil
		} else {
			ps[i] = passage(f, i, fmt.Sprintf("common words in passage %d", i), float32(i), 1)
		}
	}
	ps[n-1].Content = "the quokka smiles"
	must(t, e.s.CompleteIndexing(e.ctx, f.ID, f.Generation, "v2", ps, e.now()), "CompleteIndexing")
	var got []platform.Passage
	for tok := ""; ; {
		page, next, err := e.s.ListPassages(e.ctx, f.ID, store.Page{Token: tok, Limit: 500})
		must(t, err, "ListPassages")
		got = append(got, page...)
		if next == "" {
			break
		}
		tok = next
	}
	if len(got) != n {
		t.Fatalf("stored %d passages, want %d", len(got), n)
	}
	for i, p := range got {
		if p.Position != i || p.Content != ps[i].Content {
			t.Fatalf("passage %d: position %d content %q, want %q", i, p.Position, p.Content, ps[i].Content)
		}
	}
	vs, err := e.s.PassageVectors(e.ctx, b.ID, 0, math.MaxInt64)
	must(t, err, "PassageVectors")
	if len(vs) != n {
		t.Fatalf("PassageVectors: %d rows, want %d", len(vs), n)
	}
	for i, v := range vs {
		if want := len(ps[i].Vector); len(v.Vector) != want {
			t.Fatalf("passage %d: vector of %d dims, want %d", i, len(v.Vector), want)
		}
	}
	if seqs, err := e.search(all, nil, nil, "quokka"); err != nil || len(seqs) != 1 {
		t.Fatalf("a word counted as absent before indexing: found %v %v", seqs, err)
	}
	if seqs, err := e.search(all, nil, nil, "common"); err != nil || len(seqs) != 1000 {
		t.Fatalf("a word of every body passage: found %d (want the budget, 1000), %v", len(seqs), err)
	}
	must(t, e.s.CompleteIndexing(e.ctx, f.ID, f.Generation, "v2", []platform.Passage{passage(f, 0, "one common passage", 1, 0)}, e.now()), "CompleteIndexing again")
	if seqs, err := e.search(all, nil, nil, "common quokka"); err != nil || len(seqs) != 1 {
		t.Fatalf("after re-indexing: found %v %v", seqs, err)
	}
}
