// Package indexing turns files uploaded with `index: true` into searchable
// passages: workers take indexing jobs from the queue, parse the content
// (package parse), cut it into passages (chunk), embed them (embed) and store
// them; Search ranks passages by full-text relevance and vector similarity,
// fused.
package indexing

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/botplatform/botplatform/internal/ai"
	"github.com/botplatform/botplatform/internal/blob"
	serveconfig "github.com/botplatform/botplatform/internal/config"
	"github.com/botplatform/botplatform/internal/indexing/chunk"
	"github.com/botplatform/botplatform/internal/indexing/embed"
	"github.com/botplatform/botplatform/internal/indexing/parse"
	"github.com/botplatform/botplatform/internal/metrics"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Config tunes the service.
type Config struct {
	Workers  int            // indexing jobs run at once
	Embedder embed.Embedder // nil: the built-in one
	Poll     time.Duration  // longest sleep before looking for jobs queued elsewhere
	Log      *slog.Logger
	// Metrics counts indexed files (nil: none).
	Metrics *metrics.Metrics
	// Node is this process's id among those sharing the database: its
	// claims are recorded under it, and at start it hands back the jobs it
	// held when it last stopped (a crash).
	Node string
	// ReleaseAtStart hands back, at start, every job claimed by anyone (a
	// single process owns the database).
	ReleaseAtStart bool
	// Model is the model server of the AI-assisted options; nil: none
	// (built-in methods where they exist).
	Model ai.Model
	// AI prices the model's calls (AI Spend).
	AI ai.Config
	// RewriteQueries has the model turn each hybrid search's question
	// into search terms first (rewrite.go); needs Model.
	RewriteQueries bool
	// IndexQuestions has the model write the questions each passage
	// answers as it is indexed (questions.go); needs Model.
	IndexQuestions bool
	// Lease is how long a claimed job is held without news of its worker
	// (default --job-lease's); the worker renews it while it works.
	Lease time.Duration
	// StorageRoom returns the bytes a workspace may still store under its
	// File Storage quota (page images of vision.indexPages); nil: no limit.
	StorageRoom func(ctx context.Context, workspaceID string) (int64, error)
}

// Service indexes files and searches them.
type Service struct {
	store Store
	blobs blob.Store
	clock platform.Clock
	cfg   Config
	emb   embed.Embedder
	log   *slog.Logger

	vecMu sync.Mutex
	vecs  map[string]*vectorIndex // by bot
}

// New returns the service; Run starts its workers.
func New(st Store, blobs blob.Store, clock platform.Clock, cfg Config) *Service {
	if cfg.Workers <= 0 {
		cfg.Workers = serveconfig.Defaults().IndexWorkers
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Lease <= 0 {
		cfg.Lease = serveconfig.Defaults().JobLease
	}
	if cfg.Embedder == nil {
		cfg.Embedder = embed.NewBuiltin()
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Service{store: st, blobs: blobs, clock: clock, cfg: cfg, emb: cfg.Embedder, log: cfg.Log,
		vecs: map[string]*vectorIndex{}}
}

// maxAttempts bounds the retries of a job failing for a passing reason (the
// database, the embeddings server); the file then fails with the reason.
const maxAttempts = 5

// Run runs the workers until ctx ends, then waits for the jobs in progress.
func (s *Service) Run(ctx context.Context) {
	if s.cfg.ReleaseAtStart || s.cfg.Node != "" {
		if n, err := s.store.ReleaseJobs(ctx, platform.JobIndexFile, platform.ReleaseNode(s.cfg.Node, s.cfg.ReleaseAtStart)); err != nil {
			s.log.Error("indexing: releasing jobs", "err", err)
		} else if n > 0 {
			s.log.Info("indexing: jobs of the previous run queued again", "count", n)
		}
	}
	var inflight atomic.Int64
	var wg sync.WaitGroup
	done := make(chan struct{}, s.cfg.Workers)
	for {
		// Taken before the claim: a job committed after the claim looked
		// wakes the wait below.
		queued := s.store.Queued(platform.JobIndexFile)
		if free := s.cfg.Workers - int(inflight.Load()); free > 0 {
			now := s.clock.Now()
			jobs, err := s.store.ClaimJobs(ctx, platform.JobIndexFile, s.cfg.Node, now, now.Add(s.cfg.Lease), free)
			if err != nil && ctx.Err() == nil {
				s.log.Error("indexing: claiming jobs", "err", err)
			}
			for _, j := range jobs {
				inflight.Add(1)
				wg.Go(func() {
					s.process(context.WithoutCancel(ctx), j)
					inflight.Add(-1)
					select {
					case done <- struct{}{}:
					default:
					}
				})
			}
		}
		t := time.NewTimer(s.cfg.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			wg.Wait()
			return
		case <-queued:
		case <-done:
		case <-t.C:
		}
		t.Stop()
	}
}

// failure is an indexing failure the user can act on: the file ends in
// indexing_failed with it as reason, and the job is done.
type failure struct{ reason string }

func (f *failure) Error() string { return f.reason }

func failf(format string, args ...any) error { return &failure{fmt.Sprintf(format, args...)} }

func (s *Service) process(ctx context.Context, j platform.Job) {
	var job platform.IndexJob
	if err := json.Unmarshal(j.Payload, &job); err != nil {
		s.log.Error("indexing: unreadable job", "job", j.ID, "err", err)
		s.finish(ctx, j)
		return
	}
	stop := store.KeepLease(ctx, s.store, s.clock, j.ID, s.cfg.Lease, s.log)
	start := time.Now()
	rep := indexReport{format: "unknown"}
	err := s.index(ctx, job, &rep)
	stop()
	var f *failure
	switch {
	case err == nil:
		s.cfg.Metrics.Indexed(rep.format, rep.bytes, time.Since(start), true)
	case errors.Is(err, platform.ErrConflict), errors.Is(err, platform.ErrNotFound):
		// The file changed or went away meanwhile.
	case errors.As(err, &f):
		s.cfg.Metrics.Indexed(rep.format, 0, time.Since(start), false)
		s.fail(ctx, job, f.reason)
	case j.Attempts >= maxAttempts:
		s.cfg.Metrics.Indexed(rep.format, 0, time.Since(start), false)
		s.fail(ctx, job, fmt.Sprintf("indexing failed %d times; last error: %v", j.Attempts, err))
	default:
		backoff := time.Duration(1<<min(j.Attempts, 8)) * time.Second
		s.log.Warn("indexing: will retry", "file", job.FileID, "attempt", j.Attempts, "in", backoff, "err", err)
		if err := s.store.RetryJob(ctx, j.ID, s.clock.Now().Add(backoff)); err != nil && !errors.Is(err, platform.ErrNotFound) {
			s.log.Error("indexing: handing a job back", "job", j.ID, "err", err)
		}
		return
	}
	s.finish(ctx, j)
}

func (s *Service) fail(ctx context.Context, job platform.IndexJob, reason string) {
	if err := s.store.FailIndexing(ctx, job.FileID, job.Generation, reason, s.clock.Now()); err != nil && !errors.Is(err, platform.ErrConflict) {
		s.log.Error("indexing: recording a failure", "file", job.FileID, "err", err)
	}
}

func (s *Service) finish(ctx context.Context, j platform.Job) {
	if err := s.store.FinishJob(ctx, j.ID, false, nil, nil, s.clock.Now()); err != nil && !errors.Is(err, platform.ErrNotFound) {
		s.log.Error("indexing: finishing a job", "job", j.ID, "err", err)
	}
}

// indexReport is what the metrics learn of an indexing: the file's format
// and its content's size.
type indexReport struct {
	format string
	bytes  int64
}

// index indexes one file: its content, or the caller's own passages.
func (s *Service) index(ctx context.Context, job platform.IndexJob, rep *indexReport) error {
	f, err := s.store.GetFile(ctx, "", job.FileID)
	if err != nil {
		return err
	}
	if f.Generation != job.Generation {
		return platform.ErrConflict // replaced: a newer job indexes it
	}
	cfg := configOf(f)
	m := &meter{s: s, f: f}
	var ps []chunk.Passage
	if job.Own {
		rep.format = "passages"
		ps = ownPassages(job.Passages)
	} else {
		if typ, err := parse.Detect(f.ContentType, f.Key); err == nil {
			rep.format = typ
		} else {
			rep.format = "unsupported"
		}
		if f.Size != nil && *f.Size > platform.MaxIndexBytes {
			return failf("files larger than 95 MB cannot be indexed; this one is %.1f MB", float64(*f.Size)/(1<<20))
		}
		content, err := s.read(ctx, f)
		if err != nil {
			return err
		}
		rep.bytes = int64(len(content))
		d, parseErr := parse.Parse(f.ContentType, f.Key, content)
		// A PDF without text (a scan) is what the vision options read:
		// it fails only if they do not cover it.
		if parseErr != nil && !(errors.Is(parseErr, parse.ErrNoText) && cfg.vision()) {
			return failf("%v", parseErr)
		}
		typ, _ := parse.Detect(f.ContentType, f.Key)
		var pages []chunk.Passage
		if typ == parse.TypePDF {
			if d, pages, err = vision(ctx, m, cfg, f.Key, content, d); err != nil {
				return err
			}
			if parseErr != nil && len(pages) == 0 {
				return failf("%v", parseErr) // the pages asked for are not in the file
			}
		}
		if d, err = assist(ctx, m, cfg, typ, d); err != nil {
			return err
		}
		ps = mergeByPage(chunk.Chunk(d, cfg.options()), pages)
		if cfg.Summarization.Enable {
			sums, err := summaries(ctx, m, cfg, f.Key, d)
			if err != nil {
				return err
			}
			for _, sm := range sums {
				for _, text := range chunk.Split(sm.text, cfg.Chunking.MaximumChunkLength) {
					embedText := text
					if len(sm.breadcrumb) > 0 {
						embedText = strings.Join(sm.breadcrumb, " > ") + "\n" + text
					}
					ps = append(ps, chunk.Passage{Content: text, Embed: embedText, Type: platform.PassageSummary, Breadcrumb: sm.breadcrumb, Page: sm.page})
				}
			}
		}
	}
	// Headings get no vector: a heading alone is a few words, and many
	// documents share the same ones ("Overview", "Pricing"), so they would
	// crowd the vector ranking. The passages under a heading carry it in what
	// they embed (embeddedContextLevels, embedBreadcrumb); full-text search
	// finds the headings themselves.
	var texts []string
	var embedded []int
	for i, p := range ps {
		if p.Subtype != chunk.Title && p.Subtype != chunk.Subtitle {
			texts = append(texts, p.Embed)
			embedded = append(embedded, i)
		}
	}
	vecs := make([][]float32, len(ps))
	if len(texts) > 0 {
		got, err := s.emb.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("embedding: %w", err)
		}
		for k, i := range embedded {
			vecs[i] = got[k]
		}
	}
	qs := s.questions(ctx, m, ps)
	out := make([]platform.Passage, len(ps))
	for i, p := range ps {
		out[i] = platform.Passage{ID: platform.NewID("psg_"), FileID: f.ID, BotID: f.BotID, Position: i, Content: p.Content,
			Type: cmp.Or(p.Type, platform.PassageChunk), Subtype: p.Subtype, PageNumber: p.Page, Breadcrumb: p.Breadcrumb, Questions: qs[i],
			Vector: vecs[i], Image: p.Image, ImageType: p.ImageType}
	}
	return s.store.CompleteIndexing(ctx, f.ID, f.Generation, cfg.indexingStack(), out, s.clock.Now())
}

func (s *Service) read(ctx context.Context, f platform.File) ([]byte, error) {
	r, err := s.blobs.Open(ctx, f.BlobKey)
	if err != nil {
		return nil, fmt.Errorf("reading the content: %w", err)
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, platform.MaxIndexBytes+1))
}

// ownPassages are setFilePassages' passages, each kept whole.
func ownPassages(in []platform.OwnPassage) []chunk.Passage {
	out := make([]chunk.Passage, len(in))
	for i, p := range in {
		sub := p.Type
		if sub == "" {
			sub = "paragraph"
		}
		out[i] = chunk.Passage{Content: p.Content, Embed: p.Content, Subtype: sub, Page: p.PageNumber, Position: i}
	}
	return out
}
