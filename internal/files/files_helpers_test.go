package files_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/url"
	"path"
	"path/filepath"
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/admin"
	"github.com/botplatform/botplatform/internal/blob"
	"github.com/botplatform/botplatform/internal/files"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store/sqlstore"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// env is a Files service on a real store and a real blob store, with a
// manual clock, a workspace (the bootstrap one) and a bot in it.
type env struct {
	t         *testing.T
	ctx       context.Context
	store     *sqlstore.Store
	blobDir   string
	blobs     *blob.FS
	clock     *platform.ManualClock
	admin     *admin.Service
	svc       *files.Service
	actor     *platform.Actor
	workspace string
	bot       string
	caller    *files.Caller
}

var start = time.Date(2030, 3, 4, 5, 6, 0, 0, time.UTC)

func newEnv(t *testing.T, backend string) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{t: t, ctx: ctx, store: storetest.Open(t, backend), blobDir: t.TempDir(), clock: platform.NewManualClock(start)}
	var err error
	if e.blobs, err = blob.NewFS(e.blobDir); err != nil {
		t.Fatal(err)
	}
	e.admin = admin.New(e.store, e.clock, admin.Config{ChatURL: "http://chat.test"})
	boot, err := e.admin.Bootstrap(ctx, "")
	if err != nil || !boot.Created {
		t.Fatalf("bootstrap: %+v %v", boot, err)
	}
	e.workspace = boot.WorkspaceID
	if e.actor, err = e.admin.Authenticate(ctx, boot.Token, boot.WorkspaceID); err != nil {
		t.Fatal(err)
	}
	bot, err := e.admin.CreateBot(ctx, e.actor, admin.BotInput{})
	if err != nil {
		t.Fatal(err)
	}
	e.bot = bot.ID
	e.svc, err = files.New(ctx, e.store, e.blobs, e.admin, e.clock, slog.New(slog.DiscardHandler), files.Config{PublicURL: "http://files.test/"})
	if err != nil {
		t.Fatal(err)
	}
	if e.caller, err = e.svc.Authorize(ctx, boot.Token, files.Headers{BotID: bot.ID}); err != nil {
		t.Fatal(err)
	}
	return e
}

// signedOf parses a signed URL the service handed out.
func signedOf(t *testing.T, u string) files.SignedRequest {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatalf("parse %q: %v", u, err)
	}
	return files.ParseSigned(path.Base(p.Path), p.Query())
}

func (e *env) upsert(in files.UpsertInput) platform.File {
	e.t.Helper()
	f, err := e.svc.Upsert(e.ctx, e.caller, in)
	if err != nil {
		e.t.Fatalf("upsert %s: %v", in.Key, err)
	}
	return f
}

// create upserts a file of content with an optional expiry and uploads it.
func (e *env) create(key string, content []byte, expiresAt time.Time, index bool) platform.File {
	e.t.Helper()
	in := files.UpsertInput{Key: key, Size: int64(len(content)), Index: index}
	if !expiresAt.IsZero() {
		v := expiresAt.Format(time.RFC3339)
		in.ExpiresAt = &v
	}
	f := e.upsert(in)
	done, err := e.svc.Upload(e.ctx, signedOf(e.t, e.svc.UploadURL(f)), "", bytes.NewReader(content))
	if err != nil {
		e.t.Fatalf("upload %s: %v", key, err)
	}
	return done
}

func (e *env) fileBytes() int64 {
	e.t.Helper()
	st, err := e.store.GetStorage(e.ctx, e.workspace)
	if err != nil {
		e.t.Fatal(err)
	}
	return st.FileBytes
}

func (e *env) vectorBytes() int64 {
	e.t.Helper()
	st, err := e.store.GetStorage(e.ctx, e.workspace)
	if err != nil {
		e.t.Fatal(err)
	}
	return st.VectorBytes
}

// requireErr requires an *platform.Error of that type.
func requireErr(t *testing.T, what string, err error, typ platform.ErrorType) {
	t.Helper()
	pe, ok := platform.AsError(err)
	if !ok || pe.Type != typ {
		t.Fatalf("%s: error %v, want %s", what, err, typ)
	}
}

// blobCount counts the stored objects (temporary files excluded).
func (e *env) blobCount() int {
	e.t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(e.blobDir, "objects"), func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			n++
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		e.t.Fatal(err)
	}
	return n
}
