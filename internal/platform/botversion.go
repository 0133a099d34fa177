package platform

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// BotVersion is an immutable snapshot of what a bot runs: its code, name,
// tags and definition (configuration, schemas, events, actions…). Secrets
// are not part of it: rolling back never brings an old secret back, and a
// version's download carries none.
type BotVersion struct {
	ID          string
	BotID       string
	Seq         int64 // 1, 2, … per bot, in the order versions were recorded
	Name        string
	Description string
	BotName     string
	Code        string
	Tags        map[string]string
	Spec        BotSpec // Secrets always empty
	Digest      string  // of BotName, Code, Tags and Spec: equal digests, same bot
	CreatedBy   string  // the account (or bot key) that recorded it
	CreatedAt   time.Time
}

// SnapshotBot returns the version of b as it stands (no id, sequence or
// name yet), with its digest.
func SnapshotBot(b Bot) BotVersion {
	spec := b.Spec
	spec.Secrets = nil
	v := BotVersion{BotID: b.ID, BotName: b.Name, Code: b.Code, Tags: b.Tags, Spec: spec}
	if v.Tags == nil {
		v.Tags = map[string]string{}
	}
	v.Digest = v.digest()
	return v
}

func (v BotVersion) digest() string {
	// encoding/json sorts map keys: the same bot always hashes the same.
	raw, _ := json.Marshal(struct {
		Name string            `json:"name"`
		Code string            `json:"code"`
		Tags map[string]string `json:"tags"`
		Spec BotSpec           `json:"spec"`
	}{v.BotName, v.Code, v.Tags, v.Spec})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}
