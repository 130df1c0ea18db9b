package stdio

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// threads counts this process's OS threads.
func threads(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/task")
	require.NoError(t, err)
	return len(ents)
}

// TestReaperHoldsNoThreadPerChild runs many servers at once: while they
// live, the process holds no OS thread per child (the reaper parks on the
// poller), and once closed every child is reaped, none left a zombie.
func TestReaperHoldsNoThreadPerChild(t *testing.T) {
	if !pidfdSupported() {
		t.Skip("this kernel has no pidfd: children are reaped by a blocking wait, one thread each")
	}
	cat, err := exec.LookPath("cat")
	require.NoError(t, err)
	const n = 150
	cfg := Config{Command: cat, CloseGrace: 2 * time.Second}

	// Warm the runtime up with one client, so that its usual threads exist.
	first, firstSink := startHelper(t, cfg)
	send(t, first, `{"warm":1}`)
	require.Equal(t, `{"warm":1}`, firstSink.next(t))
	before := threads(t)

	trs := make([]*Transport, n)
	for i := range trs {
		tr, sink := startHelper(t, cfg)
		send(t, tr, `{"i":1}`)
		require.Equal(t, `{"i":1}`, sink.next(t)) // alive and answering
		trs[i] = tr
	}
	during := threads(t)
	// The runtime may add a few threads of its own under load; one per
	// child would be n more.
	require.Less(t, during-before, n/5, "threads before %d, with %d more children %d", before, n, during)

	var wg sync.WaitGroup
	for _, tr := range trs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = tr.Close(ctx)
		}()
	}
	wg.Wait()
	for _, tr := range trs {
		requireGone(t, tr.PID(), false)
	}
}

// TestReaperReportsStatus: the exit status and the killing signal reach
// ClosedError through the pidfd reaper as they did through Wait.
func TestReaperReportsStatus(t *testing.T) {
	for _, tc := range []struct {
		name, mode, code string
		wantCode         int
		wantSignal       string
	}{
		{"exit 0", "exit", "0", 0, ""},
		{"exit 7", "exit", "7", 7, ""},
		{"killed", "kill-self", "", -1, "SIGKILL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := helperConfig(t, tc.mode)
			cfg.Env[helperCodeEnv] = tc.code
			_, sink := startHelper(t, cfg)
			ce := sink.waitClosed(t)
			require.Equal(t, tc.wantCode, ce.ExitCode, ce.Message)
			require.Equal(t, tc.wantSignal, ce.Signal, ce.Message)
		})
	}
}

// TestReapPidfdOfReapedChild: a child someone else reaped (SIGCHLD set to
// SIG_IGN does that) is reported with an unknown status, not waited for
// forever.
func TestReapPidfdOfReapedChild(t *testing.T) {
	if !pidfdSupported() {
		t.Skip("this kernel has no pidfd")
	}
	pidfd := -1
	cmd := exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{PidFD: &pidfd}
	require.NoError(t, cmd.Start())
	require.NoError(t, cmd.Wait()) // reaped here, behind the reaper's back
	require.GreaterOrEqual(t, pidfd, 0)
	done := make(chan bool, 1)
	go func() {
		_, known, ok := reapPidfd(pidfd)
		done <- ok && !known
	}()
	select {
	case got := <-done:
		require.True(t, got, "want ok with an unknown status")
	case <-time.After(5 * time.Second):
		require.FailNow(t, "reapPidfd did not return for a child already reaped")
	}
}
