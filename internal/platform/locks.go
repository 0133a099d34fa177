package platform

import (
	"hash/fnv"
	"sync"
)

// KeyLocks serializes work by key within one process: each key maps to one
// of a fixed set of mutexes, so that memory stays bounded however many keys
// there are (two keys may share one).
type KeyLocks struct{ mu [256]sync.Mutex }

// Lock locks key's mutex and returns its unlock.
func (l *KeyLocks) Lock(key string) (unlock func()) {
	h := fnv.New32a()
	h.Write([]byte(key))
	m := &l.mu[h.Sum32()%uint32(len(l.mu))]
	m.Lock()
	return m.Unlock
}
