package store

import (
	"encoding/base64"
	"encoding/json"

	"github.com/botplatform/botplatform/internal/platform"
)

// Cursor is the position after the last row of a page in a keyset listing:
// the sort value of that row and its id as a tie-breaker. Rows added or
// removed elsewhere in the listing never shift later pages.
type Cursor struct {
	Value int64  `json:"v,omitempty"`
	Text  string `json:"s,omitempty"` // the sort value when it is text
	ID    string `json:"i"`
}

// Encode returns the opaque nextToken for c.
func (c Cursor) Encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor parses a nextToken; the empty token is the first page (nil).
func DecodeCursor(token string) (*Cursor, error) {
	if token == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	var c Cursor
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.ID == "" {
		return nil, platform.Errorf(platform.TypeInvalidQuery, "nextToken: not a token returned by a previous page")
	}
	return &c, nil
}
