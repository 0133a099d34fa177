package httpapi

import (
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"
)

// Debug is the handler of the debug listener (--debug-addr, loopback only,
// no authentication): GET /debug/runtime answers the process's figures as
// JSON (goroutines, heap, garbage collections), and /debug/pprof/ serves
// the Go profiles. The load tool's soak mode samples /debug/runtime.
func Debug(started time.Time) http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("GET /debug/runtime", func(w http.ResponseWriter, r *http.Request) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		writeJSON(w, http.StatusOK, map[string]any{
			"goroutines": runtime.NumGoroutine(), "heapAllocBytes": ms.HeapAlloc, "heapInuseBytes": ms.HeapInuse,
			"sysBytes": ms.Sys, "numGC": ms.NumGC, "uptimeSeconds": int64(time.Since(started).Seconds()),
		})
	})
	m.HandleFunc("/debug/pprof/", pprof.Index)
	m.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	m.HandleFunc("/debug/pprof/profile", pprof.Profile)
	m.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	m.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return m
}
