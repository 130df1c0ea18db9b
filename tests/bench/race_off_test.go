//go:build !race

package bench

// raceAllocs: without the race detector, a call allocates what
// allocs_test.go names, no more.
var raceAllocs = map[string]float64{}
