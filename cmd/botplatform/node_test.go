package main

import (
	"sync"
	"testing"
)

// TestNodeIDConcurrentStarts: processes starting at once on one data
// directory each get an id of their own, and none fails because another
// locked the id file it had just made.
func TestNodeIDConcurrentStarts(t *testing.T) {
	t.Parallel()
	for round := range 300 {
		dir := t.TempDir()
		const n = 16
		ids := make([]string, n)
		dones := make([]func(), n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { ids[i], dones[i], errs[i] = nodeID("", dir) })
		}
		wg.Wait()
		seen := map[string]bool{}
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("round %d, start %d: %v", round, i, errs[i])
			}
			if seen[ids[i]] {
				t.Fatalf("round %d: id %s given twice", round, ids[i])
			}
			seen[ids[i]] = true
		}
		for _, d := range dones {
			d()
		}
	}
}
