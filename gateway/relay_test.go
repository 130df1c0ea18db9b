package gateway

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/host"
)

// TestCausingCall: which front call an initialize-era server's request
// (it names none) is relayed to, from the calls in flight to that server.
func TestCausingCall(t *testing.T) {
	h := &host.Host{} // compared by address only
	other := &host.Host{}
	able := clientCaps{sampling: true}
	newSess := func(caps clientCaps) *Session {
		return &Session{calls: map[string]*call{}, caps: caps, level: -1, version: "2025-11-25"}
	}
	alice, bob := newSess(able), newSess(able)
	mute := newSess(clientCaps{})
	at := time.Now()
	mk := func(sess *Session, server string, on *host.Host, cancelled bool) *call {
		at = at.Add(time.Millisecond)
		return &call{sess: sess, server: server, h: on, level: -1, started: at, cancelled: cancelled}
	}
	cases := []struct {
		name    string
		calls   []*call
		want    int // index in calls; -1: refused
		wantWhy string
	}{
		{"none in flight", nil, -1, "no front request"},
		{"one", []*call{mk(alice, "fx", h, false)}, 0, ""},
		{"two of one session: the first", []*call{mk(alice, "fx", h, false), mk(alice, "fx", h, false)}, 0, ""},
		{"another server's call is not a cause", []*call{mk(bob, "fy", h, false), mk(alice, "fx", h, false)}, 1, ""},
		{"another host's call is not a cause", []*call{mk(bob, "fx", other, false), mk(alice, "fx", h, false)}, 1, ""},
		{"two sessions: refused", []*call{mk(alice, "fx", h, false), mk(bob, "fx", h, false)}, -1, "several sessions"},
		{"a front that cannot answer is not a cause", []*call{mk(mute, "fx", h, false), mk(bob, "fx", h, false)}, 1, ""},
		{"a cancelled call is no one's cause", []*call{mk(alice, "fx", h, true), mk(bob, "fx", h, false)}, 1, ""},
		{"only a cancelled call", []*call{mk(alice, "fx", h, true)}, -1, "no front request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{calls: map[*call]struct{}{}}
			for _, c := range tc.calls {
				s.calls[c] = struct{}{}
			}
			got, why := s.causingCall(h, "fx", nil, "sampling/createMessage", nil)
			if tc.want < 0 {
				require.Nil(t, got)
				require.Contains(t, why, tc.wantWhy)
				return
			}
			require.Same(t, tc.calls[tc.want], got, why)
		})
	}
}

// TestCancelBeforeOrAfterTheStart: a front's cancellation and the host's
// call id meet under the call's lock, so exactly one side names the id to
// cancel upstream, whichever comes first, and neither waits for the other
// (a cancellation once waited a second for the id, then was dropped).
func TestCancelBeforeOrAfterTheStart(t *testing.T) {
	const id = 42
	newCall := func() *call { return &call{idSet: make(chan struct{})} }

	before := newCall()
	require.Zero(t, before.markCancelled(), "no id yet: nothing to cancel by")
	require.True(t, before.setHostID(id), "the start must cancel it")

	after := newCall()
	require.False(t, after.setHostID(id))
	require.EqualValues(t, id, after.markCancelled())

	// At once, many times: exactly one of the two cancels.
	for range 1000 {
		c := newCall()
		got := make(chan uint64, 2)
		go func() {
			if c.setHostID(id) {
				got <- id
			} else {
				got <- 0
			}
		}()
		go func() { got <- c.markCancelled() }()
		a, b := <-got, <-got
		require.True(t, (a == id) != (b == id), "cancelled %d and %d", a, b)
	}
}
