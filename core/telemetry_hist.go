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

var (
	histograms     sync.Map // method name -> *methodHistogram
	histogramNames atomic.Int32
)

// observeDuration adds one call of method that took ns nanoseconds. Only
// calls of clients with a telemetry handler are observed.
func observeDuration(method string, ns int64) {
	h := histogramFor(method)
	ms := float64(ns) / 1e6
	i := 0
	for i < len(DurationBoundsMS) && ms > DurationBoundsMS[i] {
		i++
	}
	h.buckets[i].Add(1)
	h.count.Add(1)
	h.sumNS.Add(ns)
}

func histogramFor(method string) *methodHistogram {
	if h, ok := histograms.Load(method); ok {
		return h.(*methodHistogram)
	}
	if histogramNames.Add(1) > maxHistogramMethods {
		histogramNames.Add(-1)
		method = "other"
	}
	h, loaded := histograms.LoadOrStore(method, &methodHistogram{})
	if loaded && method != "other" {
		histogramNames.Add(-1)
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
func DurationHistograms() map[string]MethodDuration {
	out := map[string]MethodDuration{}
	histograms.Range(func(k, v any) bool {
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
