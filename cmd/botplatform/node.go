package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/botplatform/botplatform/internal/platform"
)

// nodeID returns this process's node id: the jobs it claims are recorded
// under it, and at start it hands back those it held when it last stopped
// (a crash), leaving other processes' alone. The id is --node-id, or one
// kept in the data directory as <data>/nodes/<id>.lock: each such file is
// locked by the process using the id, and a starting process takes the
// first id no running process holds (its own, after a crash) or makes a new
// one. Processes sharing a data directory (a shared file system) thus get
// different ids. done releases the id.
func nodeID(flag, dataDir string) (id string, done func(), err error) {
	if flag != "" {
		return flag, func() {}, nil
	}
	dir := filepath.Join(dataDir, "nodes")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, fmt.Errorf("node id: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", nil, fmt.Errorf("node id: %w", err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".lock") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, name := range names {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if lockFile(f) == nil {
			return strings.TrimSuffix(name, ".lock"), func() { f.Close() }, nil
		}
		f.Close()
	}
	// A new id's file is made and locked under another name, then renamed:
	// another process listing the directory meanwhile cannot take it.
	id = platform.NewID("node_")
	tmp := filepath.Join(dir, id+".new")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", nil, fmt.Errorf("node id: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return "", nil, fmt.Errorf("node id: locking %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, id+".lock")); err != nil {
		f.Close()
		return "", nil, fmt.Errorf("node id: %w", err)
	}
	return id, func() { f.Close() }, nil
}
