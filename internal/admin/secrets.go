package admin

import (
	"context"
	"sync"

	"github.com/botplatform/botplatform/internal/platform"
)

// secrets holds the server's own secrets, each read from the store on first
// use: the store keeps one value per name, so every process sharing the
// database signs and derives with the same one.
type secrets struct {
	mu     sync.Mutex
	byName map[string][]byte
}

func (c *secrets) get(ctx context.Context, st Store, name string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.byName[name]; ok {
		return v, nil
	}
	v, err := st.Secret(ctx, name, []byte(platform.RandomToken(32)))
	if err != nil {
		return nil, err
	}
	if c.byName == nil {
		c.byName = map[string][]byte{}
	}
	c.byName[name] = v
	return v, nil
}
