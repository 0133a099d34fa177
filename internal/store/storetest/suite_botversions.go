package storetest

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/botplatform/botplatform/internal/platform"
)

func testBotVersions(t *testing.T, e *env) {
	a := e.account(t, "a")
	w, _ := e.workspace(t, a)
	w2, _ := e.workspace(t, a)
	b := e.fullBot(w.ID, a.ID)
	must(t, e.s.CreateBot(e.ctx, b), "CreateBot")

	version := func(b platform.Bot, name string) platform.BotVersion {
		v := platform.SnapshotBot(b)
		v.ID, v.Name, v.CreatedBy, v.CreatedAt = platform.NewID(platform.PrefixVersion), name, a.ID, e.now()
		return v
	}
	v1, err := e.s.SaveBotVersion(e.ctx, w.ID, version(b, ""), 3, nil)
	must(t, err, "SaveBotVersion")
	if v1.Seq != 1 || v1.Name != "v1" {
		t.Fatalf("first version: seq %d, name %q; want 1, v1", v1.Seq, v1.Name)
	}
	got, err := e.s.GetBotVersion(e.ctx, w.ID, b.ID, v1.ID)
	must(t, err, "GetBotVersion")
	want := v1
	want.CreatedAt = mt(want.CreatedAt)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("GetBotVersion:\n got %+v\nwant %+v", got, want)
	}
	if got.Spec.Secrets != nil || got.Spec.Configuration == nil || got.Code != b.Code {
		t.Fatalf("version of the full bot: secrets %v, configuration %s, code %q", got.Spec.Secrets, got.Spec.Configuration, got.Code)
	}

	// A version saved with an update changes the bot in the same write.
	u := b
	u.Code, u.UpdatedAt = "export default { v: 2 }", e.now()
	v2, err := e.s.SaveBotVersion(e.ctx, w.ID, version(u, "named"), 3, &u)
	must(t, err, "SaveBotVersion with an update")
	if v2.Seq != 2 || v2.Name != "named" {
		t.Fatalf("second version: seq %d, name %q", v2.Seq, v2.Name)
	}
	stored, err := e.s.GetBot(e.ctx, w.ID, b.ID)
	must(t, err, "GetBot")
	if stored.Code != u.Code {
		t.Fatalf("the update did not land with its version: code %q", stored.Code)
	}

	// Failures write nothing: another workspace, an unknown bot, a failed update.
	wantErr(t, func() error { _, err := e.s.SaveBotVersion(e.ctx, w2.ID, version(b, ""), 3, nil); return err }(),
		platform.ErrNotFound, "SaveBotVersion through another workspace")
	ghost := version(b, "")
	ghost.BotID = "bot_unknown"
	wantErr(t, func() error { _, err := e.s.SaveBotVersion(e.ctx, w.ID, ghost, 3, nil); return err }(),
		platform.ErrNotFound, "SaveBotVersion of an unknown bot")
	bad := u
	bad.WorkspaceID = w2.ID
	wantErr(t, func() error { _, err := e.s.SaveBotVersion(e.ctx, w.ID, version(bad, ""), 3, &bad); return err }(),
		platform.ErrNotFound, "SaveBotVersion whose update fails")
	wantErr(t, func() error { _, err := e.s.GetBotVersion(e.ctx, w2.ID, b.ID, v1.ID); return err }(),
		platform.ErrNotFound, "GetBotVersion through another workspace")
	wantErr(t, func() error { _, err := e.s.ListBotVersions(e.ctx, w2.ID, b.ID); return err }(),
		platform.ErrNotFound, "ListBotVersions through another workspace")

	// Concurrent saves get distinct sequence numbers; only the newest keep stay.
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.s.SaveBotVersion(e.ctx, w.ID, version(b, fmt.Sprint("c", i)), 3, nil)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err, "concurrent SaveBotVersion")
	}
	list, err := e.s.ListBotVersions(e.ctx, w.ID, b.ID)
	must(t, err, "ListBotVersions")
	var seqs []int64
	for _, v := range list {
		seqs = append(seqs, v.Seq)
		if v.Code != "" || v.Spec.Configuration != nil {
			t.Errorf("a listed version carries its code or spec: %+v", v)
		}
	}
	if !reflect.DeepEqual(seqs, []int64{8, 7, 6}) {
		t.Fatalf("versions kept: seqs %v; want [8 7 6] (the newest 3)", seqs)
	}
	wantErr(t, func() error { _, err := e.s.GetBotVersion(e.ctx, w.ID, b.ID, v1.ID); return err }(),
		platform.ErrNotFound, "GetBotVersion of a pruned version")

	// Deleting the bot deletes its versions.
	_, err = e.s.DeleteBot(e.ctx, w.ID, b.ID)
	must(t, err, "DeleteBot")
	wantErr(t, func() error { _, err := e.s.GetBotVersion(e.ctx, w.ID, b.ID, list[0].ID); return err }(),
		platform.ErrNotFound, "GetBotVersion after DeleteBot")
}
