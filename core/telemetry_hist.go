package core

import (
	"sync"
	"sync/atomic"
)

// DurationBoundsMS are the upper bounds, in milliseconds, of the duration
// histograms' buckets: those the MCP semantic conventions advise for
// mcp.client.operation.duration (0.01 s to 300 s), a last bucket taking
// the rest.
var DurationBoundsMS = []float64{10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 30000, 60000, 120000, 300000}

// maxHistogramMethods bounds how many method names get a histogram of
// their own (a host may call any method name); the rest share "other".
const maxHistogramMethods = 64

// methodHistogram counts one method's call durations.
type methodHistogram struct {
	buckets [15]atomic.Int64 // len(DurationBoundsMS)+1
	count   atomic.Int64
	sumNS   atomic.Int64
}

// Histograms keeps one duration histogram per method name, at most
// maxHistogramMethods of them (the rest count under "other"). The zero
// value is ready; it is safe for concurrent use.
type Histograms struct {
	byMethod sync.Map // method name -> *methodHistogram
	names    atomic.Int32
}

// processHistograms are lmcp_diagnostics' "durations": every measured call
// of every client and host.
var processHistograms Histograms

// observeDuration adds one call of method that took ns nanoseconds to the
// process-wide histograms. Only calls of clients with a telemetry handler
// are observed.
func observeDuration(method string, ns int64) { processHistograms.Observe(method, ns) }

// Observe adds one call of method that took ns nanoseconds.
func (hs *Histograms) Observe(method string, ns int64) {
	h := hs.histogramFor(method)
	ms := float64(ns) / 1e6
	i := 0
	for i < len(DurationBoundsMS) && ms > DurationBoundsMS[i] {
		i++
	}
	h.buckets[i].Add(1)
	h.count.Add(1)
	h.sumNS.Add(ns)
}

func (hs *Histograms) histogramFor(method string) *methodHistogram {
	if h, ok := hs.byMethod.Load(method); ok {
		return h.(*methodHistogram)
	}
	if hs.names.Add(1) > maxHistogramMethods {
		hs.names.Add(-1)
		method = "other"
	}
	h, loaded := hs.byMethod.LoadOrStore(method, &methodHistogram{})
	if loaded && method != "other" {
		hs.names.Add(-1)
	}
	return h.(*methodHistogram)
}

// MethodDuration is one method's histogram as lmcp_diagnostics reports it.
type MethodDuration struct {
	Count   int64   `json:"count"`
	SumMS   float64 `json:"sum_ms"`
	Buckets []int64 `json:"buckets"` // per bucket of DurationBoundsMS, then the overflow
}

// DurationHistograms reports the per-method call durations observed so
// far, across clients and hosts.
func DurationHistograms() map[string]MethodDuration { return processHistograms.Report() }

// Report is each observed method's histogram so far (empty when none).
func (hs *Histograms) Report() map[string]MethodDuration {
	out := map[string]MethodDuration{}
	hs.byMethod.Range(func(k, v any) bool {
		h := v.(*methodHistogram)
		d := MethodDuration{Count: h.count.Load(), SumMS: float64(h.sumNS.Load()) / 1e6, Buckets: make([]int64, len(h.buckets))}
		for i := range h.buckets {
			d.Buckets[i] = h.buckets[i].Load()
		}
		out[k.(string)] = d
		return true
	})
	return out
}
