package nodehost

import (
	"context"
	"fmt"
	"time"
)

// checkTimeout bounds how long a bundle may take to load at deploy time.
const checkTimeout = 20 * time.Second

// Check loads code once in a node process, as a call would, and returns what the bundle declares, or why
// it cannot serve calls: a load error (a syntax error with its line, an exception at load) or no exported
// handler. It is meant for refusing a deploy.
func (h *Host) Check(parent context.Context, code string) (Definition, error) {
	ctx, cancel := context.WithTimeout(parent, checkTimeout)
	defer cancel()
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return Definition{}, errClosed
	}
	p, err := h.spawn(Bundle{Code: code}, true)
	h.mu.Unlock()
	if err != nil {
		return Definition{}, err
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		p.kill("")
		<-p.done
		if err := parent.Err(); err != nil {
			return Definition{}, fmt.Errorf("the check of the bot's code was cut short: %w", err)
		}
		return Definition{}, fmt.Errorf("the bot's code did not finish loading within %s", checkTimeout)
	}
	if p.isReady() {
		if p.definition == nil {
			return Definition{}, nil
		}
		return *p.definition, nil
	}
	return Definition{}, p.err
}
