package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/botplatform/botplatform/internal/harness"
)

// TestLoadAndSoak runs the load for a few seconds with soak sampling and
// requires every operation of the mix to have run without errors, and the
// soak's figures to be read. The binary is BOTPLATFORM_BIN, or built here.
func TestLoadAndSoak(t *testing.T) {
	bin, cleanup, err := harness.Binary(os.Getenv("BOTPLATFORM_BIN"))
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	var out bytes.Buffer
	err = run(context.Background(), []string{"--bin", bin, "--rate", "40", "--duration", "6s", "--users", "4",
		"--soak", "--sample-every", "1s", "--warmup", "1s", "--max-errors", "0"}, &out, &out)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range ops {
		if !strings.Contains(out.String(), "\n"+o.name+" ") {
			t.Errorf("operation %s did not run", o.name)
		}
	}
	for _, want := range []string{"chat.reply", "files.download", "soak drift", "goroutines"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in the output", want)
		}
	}
	if strings.Contains(out.String(), "goroutines           0 ->") {
		t.Errorf("goroutines were not sampled")
	}
}

// TestReplyBeforeItsMessageIsKnown: the bot's reply may reach the user's
// stream before createMessage has answered with the message's id. The round
// trip then finds it at once; it used to be dropped, and the round trip
// waited a second for its look at the conversation, which the soak reported
// as one-second replies.
func TestReplyBeforeItsMessageIsKnown(t *testing.T) {
	replies := map[string]chan struct{}{}
	close(replyChan(replies, "msg_1")) // the stream, first
	select {
	case <-replyChan(replies, "msg_1"): // then the round trip
	default:
		t.Fatal("the reply that came first is not seen by the round trip")
	}
	if ch := replyChan(replies, "msg_2"); isClosed(ch) {
		t.Fatal("a message without a reply has one")
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
