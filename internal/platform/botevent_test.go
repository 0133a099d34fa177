package platform

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestBotEventJobDecodesStoredPayloads: jobs queued before BotEventJob
// existed (the store wrote chat jobs from a map, the runtime from its own
// struct) decode to the same values and encode back to the same JSON.
func TestBotEventJobDecodesStoredPayloads(t *testing.T) {
	for _, c := range []struct {
		stored string
		want   BotEventJob
		keep   bool
	}{
		{`{"conversationId":"cnv_01J0","id":"msg_01J0","type":"message"}`,
			BotEventJob{Type: BotEventMessage, ID: "msg_01J0", ConversationID: "cnv_01J0"}, false},
		{`{"conversationId":"cnv_01J0","id":"evt_01J0","type":"event"}`,
			BotEventJob{Type: BotEventChat, ID: "evt_01J0", ConversationID: "cnv_01J0"}, false},
		{`{"type":"scheduled","conversationId":"cnv_01J0","userId":"usr_01J0","botId":"bot_01J0","eventId":"evt_01J1","eventType":"remind","payload":{"n":[1,2.5,null,true],"s":"x"}}`,
			BotEventJob{Type: BotEventScheduled, ConversationID: "cnv_01J0", UserID: "usr_01J0", BotID: "bot_01J0", EventID: "evt_01J1", EventType: "remind",
				Payload: json.RawMessage(`{"n":[1,2.5,null,true],"s":"x"}`)}, true},
		{`{"type":"recurring","botId":"bot_01J0","eventId":"evt_01J2","eventType":"tick","name":"every-minute","payload":{}}`,
			BotEventJob{Type: BotEventRecurring, BotID: "bot_01J0", EventID: "evt_01J2", EventType: "tick", Name: "every-minute", Payload: json.RawMessage(`{}`)}, true},
	} {
		var got BotEventJob
		if err := json.Unmarshal([]byte(c.stored), &got); err != nil {
			t.Fatalf("decode %s: %v", c.stored, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("decode %s:\n got %+v\nwant %+v", c.stored, got, c.want)
		}
		if got.Keep() != c.keep {
			t.Errorf("%s: Keep() = %v, want %v", c.stored, got.Keep(), c.keep)
		}
		out, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		_ = json.Unmarshal([]byte(c.stored), &a)
		_ = json.Unmarshal(out, &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("encode: got %s, want the stored %s", out, c.stored)
		}
	}
}
