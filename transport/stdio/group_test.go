package stdio

import (
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestNoGroupButAServersIsSignalled: a pgid that is no server's (0 is
// the caller's own group for kill(2), 1 every process it may signal) is
// never signalled, and never counts as a live group to wait for.
//
// The witness is a stopped process in this test's own group: SIGCONT
// resumes it within kill(2) itself (the kernel wakes a stopped process
// when the signal is sent, not when it is taken), so its state says at
// once whether the signal went out, and SIGCONT disturbs nothing else in
// the group a failed guard would reach.
func TestNoGroupButAServersIsSignalled(t *testing.T) {
	for _, pgid := range []int{0, 1, -1, -7} {
		require.False(t, groupAlive(pgid), "pgid %d taken for a live server group", pgid)
	}

	witness := exec.Command("sleep", "60")
	require.NoError(t, witness.Start())
	pid := witness.Process.Pid
	t.Cleanup(func() {
		_ = witness.Process.Kill()
		_ = witness.Wait()
	})
	state := func() byte {
		var buf [512]byte
		st, ok := procStat("/proc/"+strconv.Itoa(pid)+"/stat", buf[:])
		require.True(t, ok)
		return st.state
	}
	stop := func() {
		require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
		for deadline := time.Now().Add(10 * time.Second); state() != 'T'; time.Sleep(time.Millisecond) {
			require.True(t, time.Now().Before(deadline), "the witness never stopped")
		}
	}
	for _, tc := range []struct {
		name    string
		send    func()
		resumed bool
	}{
		{"SIGCONT to the witness (the check's own check)", func() { require.NoError(t, syscall.Kill(pid, syscall.SIGCONT)) }, true},
		{"signalGroup(0): this process's own group", func() { signalGroup(0, syscall.SIGCONT) }, false},
	} {
		stop()
		tc.send()
		require.Equal(t, tc.resumed, state() != 'T', tc.name)
	}
}
