package botruntime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/botplatform/botplatform/internal/dispatch"
	"github.com/botplatform/botplatform/internal/platform"
)

// Action runs one of the bot's actions (bot.action) with input, and
// returns its output. Errors thrown by the action are RuntimeError (400);
// an action the code does not define is ResourceNotFound.
func (r *Runtime) Action(ctx context.Context, b *dispatch.Bot, name string, input json.RawMessage) (json.RawMessage, error) {
	seed := platform.NewID("act_")
	c := r.newCall(ctx, b, seed, r.clock.Now())
	res, runErr := r.invoke(c, "action", name, string(input), botContext(b))
	if logs := c.finish("action "+name, runErr); len(logs) > 0 {
		if err := r.store.AppendLogs(context.WithoutCancel(ctx), logs); err != nil {
			r.log.Error("bot runtime: writing an action's logs", "bot", b.ID, "err", err)
		}
	}
	if runErr != nil {
		var se *ScriptError
		var de *DeadlineError
		var ce *CrashError
		var le *loadError
		switch {
		case errors.As(runErr, &de):
			return nil, platform.Errorf(platform.TypeOperationTimeout, "action %q: %v", name, runErr)
		case errors.As(runErr, &le):
			return nil, platform.Errorf(platform.TypeRuntime, "action %q failed: %v", name, runErr)
		case errors.As(runErr, &se):
			return nil, platform.Errorf(platform.TypeRuntime, "action %q failed: %s", name, se.Message)
		case errors.As(runErr, &ce):
			return nil, platform.Errorf(platform.TypeRuntime, "action %q failed: %s", name, ce.Reason)
		case errors.Is(runErr, errProcessLost):
			return nil, platform.Errorf(platform.TypeOperationTimeout, "action %q: %v", name, runErr)
		}
		return nil, runErr
	}
	var text *string
	if err := json.Unmarshal([]byte(res), &text); err != nil {
		return nil, fmt.Errorf("action %q: its result: %w", name, err)
	}
	if text == nil {
		return nil, platform.Errorf(platform.TypeResourceNotFound, "action %q is not defined by the bot's code", name)
	}
	out := json.RawMessage(*text)
	if len(out) == 0 || out[0] != '{' {
		return nil, platform.Errorf(platform.TypeRuntime, "action %q must return an object, got %s", name, out)
	}
	return out, nil
}
