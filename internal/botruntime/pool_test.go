package botruntime

import (
	"testing"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

func TestForgetIdleDropsQuietBots(t *testing.T) {
	r := New(nil, nil, platform.SystemClock{}, Config{})
	now := time.Now()
	r.pools["bot_busy"] = &pool{botID: "bot_busy", lastUsed: now.Add(-time.Minute)}
	r.pools["bot_quiet"] = &pool{botID: "bot_quiet", lastUsed: now.Add(-idleBots - time.Second)}
	r.bots["bot_busy"] = &botInfo{}
	r.forgetIdle(now)
	if _, ok := r.pools["bot_busy"]; !ok {
		t.Error("the VMs of a bot with recent events were dropped")
	}
	if _, ok := r.pools["bot_quiet"]; ok {
		t.Error("the VMs of a bot without events for longer than idleBots were kept")
	}
	if len(r.bots) != 0 {
		t.Errorf("cached bot settings kept: %v", r.bots)
	}
}

func TestPoolReusesWarmVMsOfCurrentCodeOnly(t *testing.T) {
	r := New(nil, nil, platform.SystemClock{}, Config{Workers: 2})
	b1 := &botInfo{bot: platform.Bot{ID: "bot_1", Code: "var loads = (globalThis.loads || 0) + 1; globalThis.loads = loads"}, version: "1", timeout: time.Second}
	c := r.newCall(t.Context(), b1, "seed", time.Now())
	v, p, err := r.vmFor(b1, c)
	if err != nil {
		t.Fatal(err)
	}
	r.release(p, v)
	again, _, err := r.vmFor(b1, c)
	if err != nil || again != v {
		t.Fatalf("a released VM of the current code was not reused (err %v)", err)
	}
	r.release(p, again)
	b2 := &botInfo{bot: platform.Bot{ID: "bot_1", Code: "var v2 = true"}, version: "2", timeout: time.Second}
	fresh, p2, err := r.vmFor(b2, c)
	if err != nil || fresh == v {
		t.Fatalf("new code ran on a VM of the old code (err %v)", err)
	}
	r.release(p, v) // a VM of the old version coming back is dropped
	if len(p2.idle) != 0 {
		t.Fatalf("a VM of the old code went into the new pool")
	}
}
