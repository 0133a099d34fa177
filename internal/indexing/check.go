package indexing

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/botplatform/botplatform/internal/aispend"
	"github.com/botplatform/botplatform/internal/indexing/parse"
	"github.com/botplatform/botplatform/internal/platform"
)

// CheckUpsert checks, when a file is upserted with index true, that its
// indexing configuration (raw: the upsert's indexing object) can be
// honoured: options that apply to the file (smartCleanup and vision only
// to PDF files) against the workspace's plan (402 PaymentRequired), the
// model server they need (400 InvalidPayload naming the option and the
// setting), and the workspace's AI Spend when they would call a model (403
// QuotaExceeded). Options that do not apply are ignored, at no cost.
func (s *Service) CheckUpsert(ctx context.Context, workspaceID, contentType, key string, raw json.RawMessage) error {
	cfg := configFrom(raw)
	typ, err := parse.Detect(contentType, key)
	if err != nil {
		return nil // indexing fails with the reason; no option applies
	}
	pdf := typ == parse.TypePDF
	const p = "indexing.configuration."
	type option struct {
		field  string
		paid   bool // Team/Enterprise only
		model  bool // calls a model (when one is configured)
		needed bool // no built-in method: a model server is required
	}
	var opts []option
	if cfg.Parsing.Mode == "agent" {
		opts = append(opts, option{p + "parsing.mode", false, true, true})
	}
	if pdf && cfg.Parsing.SmartCleanup {
		opts = append(opts, option{p + "parsing.smartCleanup", true, true, false})
	}
	if cfg.Summarization.Enable {
		opts = append(opts, option{p + "summarization.enable", true, true, false})
	}
	if pdf && cfg.Vision.TranscribePages.set() {
		opts = append(opts, option{p + "vision.transcribePages", true, true, true})
	}
	if pdf && cfg.Vision.IndexPages.set() {
		opts = append(opts, option{p + "vision.indexPages", true, true, true})
	}
	if len(opts) == 0 {
		return nil
	}
	w, err := s.store.GetWorkspace(ctx, workspaceID)
	if err != nil {
		return err
	}
	calls := false
	for _, o := range opts {
		if o.paid {
			if err := aispend.RequirePlan(w, o.field); err != nil {
				return err
			}
		}
		if o.needed && s.cfg.Model == nil {
			return platform.Invalid(o.field, "needs a model server, and none is configured (start the server with --ai-url and --ai-model)")
		}
		calls = calls || (o.model && s.cfg.Model != nil)
	}
	if calls {
		var f *failure
		if err := s.spendLeftOf(ctx, w); errors.As(err, &f) {
			return platform.Errorf(platform.TypeQuotaExceeded, "%s", f.reason)
		} else if err != nil {
			return err
		}
	}
	return nil
}
