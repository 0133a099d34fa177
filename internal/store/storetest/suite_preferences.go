package storetest

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

func testPreferences(t *testing.T, e *env) {
	a := e.account(t, "prefs")
	other := e.account(t, "prefs-other")
	w, _ := e.workspace(t, a)
	acc := store.PreferenceOwner{AccountID: a.ID}
	ws := store.PreferenceOwner{WorkspaceID: w.ID}

	get := func(o store.PreferenceOwner, key string) (string, error) {
		t.Helper()
		v, err := e.s.GetPreference(e.ctx, o, key)
		return string(v), err
	}
	set := func(o store.PreferenceOwner, key, value string) {
		t.Helper()
		must(t, e.s.SetPreference(e.ctx, o, key, json.RawMessage(value), e.now()), "SetPreference %+v %s", o, key)
	}

	t.Run("set, replace and read back, per owner", func(t *testing.T) {
		set(acc, "theme", `"dark"`)
		set(ws, "theme", `{"color":"blue","n":[1,2]}`)
		set(acc, "theme", `"light"`) // replaces
		set(acc, "off", `null`)
		for _, c := range []struct {
			o          store.PreferenceOwner
			key, value string
		}{{acc, "theme", `"light"`}, {ws, "theme", `{"color":"blue","n":[1,2]}`}, {acc, "off", `null`}} {
			got, err := get(c.o, c.key)
			must(t, err, "GetPreference %+v %s", c.o, c.key)
			var g, want any
			if json.Unmarshal([]byte(got), &g) != nil || json.Unmarshal([]byte(c.value), &want) != nil || !reflect.DeepEqual(g, want) {
				t.Fatalf("GetPreference %+v %s = %s, want %s", c.o, c.key, got, c.value)
			}
		}
	})
	t.Run("unset keys and other owners are not found", func(t *testing.T) {
		for _, c := range []struct {
			o   store.PreferenceOwner
			key string
		}{{acc, "missing"}, {store.PreferenceOwner{AccountID: other.ID}, "theme"}, {ws, "off"}, {store.PreferenceOwner{WorkspaceID: "wkspace_none"}, "theme"}} {
			if _, err := get(c.o, c.key); !errors.Is(err, platform.ErrNotFound) {
				t.Fatalf("GetPreference %+v %s: err = %v, want ErrNotFound", c.o, c.key, err)
			}
		}
	})
	t.Run("an owner that does not exist is not found", func(t *testing.T) {
		for _, o := range []store.PreferenceOwner{{AccountID: "acct_none"}, {WorkspaceID: "wkspace_none"}} {
			err := e.s.SetPreference(e.ctx, o, "k", json.RawMessage(`1`), e.now())
			if !errors.Is(err, platform.ErrNotFound) {
				t.Fatalf("SetPreference %+v: err = %v, want ErrNotFound", o, err)
			}
		}
	})
	t.Run("deleted with their workspace", func(t *testing.T) {
		must(t, e.deleteWorkspace(e.ctx, w.ID), "DeleteWorkspace")
		if _, err := get(ws, "theme"); !errors.Is(err, platform.ErrNotFound) {
			t.Fatalf("GetPreference of a deleted workspace: err = %v, want ErrNotFound", err)
		}
		if _, err := get(acc, "theme"); err != nil {
			t.Fatalf("the account's preference went with the workspace: %v", err)
		}
	})
}
