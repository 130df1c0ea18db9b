package core

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Only the first record of a batch asks for a delivery; Take hands the
// batch over in order and the next record starts a new one.
func TestRecordBatch(t *testing.T) {
	cases := []struct {
		name  string
		adds  int
		wants []bool // what each Add reports
	}{
		{name: "one record", adds: 1, wants: []bool{true}},
		{name: "records ride along", adds: 3, wants: []bool{true, false, false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b RecordBatch
			for round := 0; round < 2; round++ {
				var got []bool
				for i := 0; i < tc.adds; i++ {
					got = append(got, b.Add(&TelemetryRecord{CallID: uint64(i + 1)}))
				}
				require.Equal(t, tc.wants, got, "round %d", round)
				recs := b.Take()
				require.Len(t, recs, tc.adds)
				for i, rec := range recs {
					require.EqualValues(t, i+1, rec.CallID, "in order")
				}
				require.Empty(t, b.Take())
			}
		})
	}
}
