// Package metrics exposes the server's figures in the Prometheus text
// format at /metrics: HTTP requests by route pattern, rate-limit refusals,
// open event streams, queued and running jobs, bot events, indexing, the
// database pools, and the Go runtime. Every method is safe on a nil
// *Metrics (no metrics).
package metrics

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/botplatform/botplatform/internal/store"
)

// Metrics holds the server's collectors, in a registry of its own.
type Metrics struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	streams      prometheus.Gauge
	botEvents    *prometheus.CounterVec
	botDuration  *prometheus.HistogramVec
	indexed      *prometheus.CounterVec
	indexBytes   *prometheus.CounterVec
	indexSeconds *prometheus.HistogramVec
	upstream     *prometheus.CounterVec
	upstreamTime *prometheus.HistogramVec
	rateLimited  *prometheus.CounterVec
	backups      *prometheus.CounterVec
	backupLast   prometheus.Gauge
	backupTime   prometheus.Gauge
}

// Unmatched is the route of a request that matched no route.
const Unmatched = "unmatched"

// New returns the collectors, with the Go runtime's and the process's.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "botplatform_http_requests_total", Help: "HTTP requests answered, by route pattern, method and status code.",
	}, []string{"route", "method", "code"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "botplatform_http_request_duration_seconds", Help: "Time to answer an HTTP request (to the end of the response; event streams excluded), by route pattern and method.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"route", "method"})
	m.streams = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "botplatform_event_streams_open", Help: "Conversation event streams (SSE) open on this process.",
	})
	m.botEvents = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "botplatform_bot_events_total", Help: "Bot events handled, by event type (message, event, recurring, scheduled, workflow) and outcome (ok, error: the bot's code failed or ran out of time, ignored, retry: handed back for later, failed: given up).",
	}, []string{"type", "outcome"})
	m.botDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "botplatform_bot_handler_duration_seconds", Help: "Time a bot event took to handle, from its claim to its end, by event type.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"type"})
	m.indexed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "botplatform_indexing_files_total", Help: "Files indexed, by format and outcome (ok, failed).",
	}, []string{"format", "outcome"})
	m.indexBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "botplatform_indexing_bytes_total", Help: "Bytes of file content indexed successfully, by format.",
	}, []string{"format"})
	m.indexSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "botplatform_indexing_duration_seconds", Help: "Time to index a file (parse, split, embed, store), by format.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12),
	}, []string{"format"})
	m.upstream = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "botplatform_upstream_requests_total", Help: "Requests to the embeddings server (service embeddings) and the model server (service model), by status code, or error when no answer came (refused, timed out).",
	}, []string{"service", "code"})
	m.upstreamTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "botplatform_upstream_request_duration_seconds", Help: "Time to the response headers of a request to the embeddings or the model server, by service.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
	}, []string{"service"})
	m.rateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "botplatform_rate_limited_total", Help: "Requests refused with 429 by a rate limit, by the limit that refused them (token, bot, chat_user, address).",
	}, []string{"limit"})
	m.backups = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "botplatform_backups_total", Help: "Scheduled backups taken, by outcome (ok, failed).",
	}, []string{"outcome"})
	m.backupLast = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "botplatform_backup_last_success_timestamp_seconds", Help: "When the last scheduled backup that succeeded ended (Unix time); 0: none yet.",
	})
	m.backupTime = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "botplatform_backup_last_duration_seconds", Help: "How long the last scheduled backup took, successful or not.",
	})
	m.reg.MustRegister(m.requests, m.duration, m.streams, m.botEvents, m.botDuration, m.indexed, m.indexBytes, m.indexSeconds, m.upstream, m.upstreamTime, m.rateLimited,
		m.backups, m.backupLast, m.backupTime,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics; with a token, only to requests bearing it
// (Authorization: Bearer TOKEN), others get 401.
func (m *Metrics) Handler(token string) http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			http.Error(w, "a bearer token is required (--metrics-token)", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Request records an answered request.
func (m *Metrics) Request(route, method string, code int, took time.Duration, stream bool) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
	if !stream {
		m.duration.WithLabelValues(route, method).Observe(took.Seconds())
	}
}

// StreamOpened counts an event stream open until the returned function is
// called.
func (m *Metrics) StreamOpened() (closed func()) {
	if m == nil {
		return func() {}
	}
	m.streams.Inc()
	return m.streams.Dec
}

// RateLimits shows the refusals of each limit set, at 0 until the first.
func (m *Metrics) RateLimits(limits ...string) {
	if m == nil {
		return
	}
	for _, l := range limits {
		m.rateLimited.WithLabelValues(l)
	}
}

// RateLimited records a request refused by that limit.
func (m *Metrics) RateLimited(limit string) {
	if m == nil {
		return
	}
	m.rateLimited.WithLabelValues(limit).Inc()
}

// BackupsScheduled shows the scheduled backups' series, at 0 until the
// first backup.
func (m *Metrics) BackupsScheduled() {
	if m == nil {
		return
	}
	m.backups.WithLabelValues(OutcomeOK)
	m.backups.WithLabelValues(OutcomeFailed)
}

// Backup records a scheduled backup that ended at end after took.
func (m *Metrics) Backup(ok bool, took time.Duration, end time.Time) {
	if m == nil {
		return
	}
	m.backupTime.Set(took.Seconds())
	if !ok {
		m.backups.WithLabelValues(OutcomeFailed).Inc()
		return
	}
	m.backups.WithLabelValues(OutcomeOK).Inc()
	m.backupLast.Set(float64(end.UnixNano()) / 1e9)
}

// Outcomes of bot events and indexings.
const (
	OutcomeOK      = "ok"      // handled (bot code ran to its end; a file indexed)
	OutcomeError   = "error"   // the bot's code failed or ran out of time
	OutcomeIgnored = "ignored" // nothing to handle (no code, or what it is about is gone)
	OutcomeRetry   = "retry"   // handed back to be handled again later
	OutcomeFailed  = "failed"  // given up after its attempts (bot events); failed (indexing)
)

// BotEvent records a handled bot event.
func (m *Metrics) BotEvent(eventType, outcome string, took time.Duration) {
	if m == nil {
		return
	}
	m.botEvents.WithLabelValues(eventType, outcome).Inc()
	m.botDuration.WithLabelValues(eventType).Observe(took.Seconds())
}

// Indexed records a file's indexing: its format (the parser's name), its
// content's size, and whether it was indexed or failed.
func (m *Metrics) Indexed(format string, bytes int64, took time.Duration, ok bool) {
	if m == nil {
		return
	}
	if !ok {
		m.indexed.WithLabelValues(format, OutcomeFailed).Inc()
		return
	}
	m.indexed.WithLabelValues(format, OutcomeOK).Inc()
	m.indexBytes.WithLabelValues(format).Add(float64(bytes))
	m.indexSeconds.WithLabelValues(format).Observe(took.Seconds())
}

// Upstream returns next (nil: http.DefaultTransport) counting and timing
// the requests it sends for service (embeddings, model).
func (m *Metrics) Upstream(service string, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	if m == nil {
		return next
	}
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		start := time.Now()
		resp, err := next.RoundTrip(req)
		m.upstreamTime.WithLabelValues(service).Observe(time.Since(start).Seconds())
		code := "error"
		if err == nil {
			code = strconv.Itoa(resp.StatusCode)
		}
		m.upstream.WithLabelValues(service, code).Inc()
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// WatchDB adds the statistics of a database pool (go_sql_*, labelled
// db_name=pool).
func (m *Metrics) WatchDB(pool string, db *sql.DB) {
	if m == nil {
		return
	}
	m.reg.MustRegister(collectors.NewDBStatsCollector(db, pool))
}

// WatchJobs adds the job queues, read from the database at each scrape
// (jobs of every process sharing it).
func (m *Metrics) WatchJobs(queues func(ctx context.Context, now time.Time) ([]store.JobQueue, error)) {
	if m == nil {
		return
	}
	m.reg.MustRegister(&jobCollector{queues: queues})
}

var (
	jobsDesc = prometheus.NewDesc("botplatform_jobs", "Unfinished jobs in the database, by kind and state (due: pending and due, scheduled: pending and due later, running: claimed).",
		[]string{"kind", "state"}, nil)
	oldestDesc = prometheus.NewDesc("botplatform_jobs_oldest_due_age_seconds", "How long the oldest due job of a kind has waited since it fell due (0: none waits).",
		[]string{"kind"}, nil)
	jobsUpDesc = prometheus.NewDesc("botplatform_jobs_scrape_ok", "1 when the job queues could be read at this scrape, 0 when the database failed.", nil, nil)
)

// jobCollector reads the job queues at each scrape.
type jobCollector struct {
	queues func(ctx context.Context, now time.Time) ([]store.JobQueue, error)
}

func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobsDesc
	ch <- oldestDesc
	ch <- jobsUpDesc
}

func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	now := time.Now()
	qs, err := c.queues(ctx, now)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(jobsUpDesc, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(jobsUpDesc, prometheus.GaugeValue, 1)
	for _, q := range qs {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(q.Due), q.Kind, "due")
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(q.Scheduled), q.Kind, "scheduled")
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(q.Running), q.Kind, "running")
		age := 0.0
		if !q.OldestDue.IsZero() {
			age = max(now.Sub(q.OldestDue).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, age, q.Kind)
	}
}
