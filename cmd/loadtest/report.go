package main

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// report prints, per operation, the count, errors and latency percentiles,
// and returns the share of top-level operations that failed.
func (l *load) report(w io.Writer) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	names := make([]string, 0, len(l.lat))
	for n := range l.lat {
		names = append(names, n)
	}
	slices.Sort(names)
	fmt.Fprintf(w, "\n%-26s %8s %7s %9s %9s %9s %9s\n", "operation", "count", "errors", "p50", "p90", "p99", "max")
	var total, failed int
	for _, n := range names {
		d := slices.Clone(l.lat[n])
		slices.Sort(d)
		fmt.Fprintf(w, "%-26s %8d %7d %9s %9s %9s %9s\n", n, len(d), l.errs[n],
			ms(pct(d, 50)), ms(pct(d, 90)), ms(pct(d, 99)), ms(d[len(d)-1]))
		if slices.ContainsFunc(ops, func(o op) bool { return o.name == n }) {
			total += len(d)
			failed += l.errs[n]
		}
	}
	fmt.Fprintf(w, "operations: %d in %s (%.1f/s), %d failed, %d not started (no free slot)\n",
		total, l.o.duration, float64(total)/l.o.duration.Seconds(), failed, l.skipped.Load())
	for _, n := range names {
		if s, ok := l.samples[n]; ok {
			fmt.Fprintf(w, "first error of %s: %s\n", n, s)
		}
	}
	if total == 0 {
		return 1
	}
	return float64(failed) / float64(total)
}

// pct is the p-th percentile of sorted durations (nearest rank).
func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }
