package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRestartPolicyDelay(t *testing.T) {
	p := RestartPolicy{MaxRestarts: 10, Backoff: 100 * time.Millisecond, MaxBackoff: 500 * time.Millisecond, Window: time.Minute}
	tests := []struct {
		n    int
		want time.Duration
	}{
		{1, 100 * time.Millisecond},
		{2, 200 * time.Millisecond},
		{3, 400 * time.Millisecond},
		{4, 500 * time.Millisecond},
		{9, 500 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(itoa(int64(tc.n)), func(t *testing.T) {
			require.Equal(t, tc.want, p.delay(tc.n))
		})
	}
}
