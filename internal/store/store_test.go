package store_test

import (
	"testing"

	"github.com/botplatform/botplatform/internal/store"
	"github.com/botplatform/botplatform/internal/store/storetest"
)

// TestStore runs the conformance suite on every backend: SQLite always,
// PostgreSQL when BOTPLATFORM_TEST_DATABASE_URL is set (skipped, with the
// reason, otherwise).
func TestStore(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) store.Store { return storetest.Open(t, backend) })
		})
	}
}
