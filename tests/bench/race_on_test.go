//go:build race

package bench

// raceAllocs is what the race detector adds to a call's allocations
// (TestCallPathAllocations, which make test runs with -race): its own per
// exchange (stdio 1, Streamable HTTP 6, as measured), and one more, since
// under it sync.Pool drops a put item at random and a pooled buffer is then
// allocated again.
var raceAllocs = map[string]float64{"stdio": 1 + 1, "streamable_http": 6 + 1}
