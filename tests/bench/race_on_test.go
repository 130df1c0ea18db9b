//go:build race

package bench

// raceAllocs is what the race detector adds to a call's allocations
// (TestCallPathAllocations, which make test runs with -race): its own per
// exchange (stdio 1, Streamable HTTP 6, as measured), and two more, since
// under it sync.Pool drops a put item at random (one in four) and a pooled
// item is then allocated again: the encoding buffer (1), the blocking
// call's waiter (3: its struct, channel and bound completion).
var raceAllocs = map[string]float64{"stdio": 1 + 2, "streamable_http": 6 + 2}
