package core

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport/memory"
)

// The probe's outcome decides the era (spec 2026-07-28, versioning,
// backward compatibility): a DiscoverResult is modern, a modern error
// picks another version and never falls back, anything else (or silence)
// is legacy — in auto mode only.
func TestDiscoveryOutcomes(t *testing.T) {
	unsupported := func(supported ...string) handlerFunc {
		return func(s *fakeServer, m wireMsg) reply {
			if meta(s.t, m)["io.modelcontextprotocol/protocolVersion"] != nil && string(meta(s.t, m)["io.modelcontextprotocol/protocolVersion"]) == `"`+modernVersion+`"` {
				return discoverOK(defaultCaps())(s, m)
			}
			data, _ := json.Marshal(map[string]any{"supported": supported, "requested": "2027-01-01"})
			s.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32022, "message": "unsupported version", "data": json.RawMessage(data)}})
			return reply{none: true}
		}
	}
	// refuseFirst rejects the first probe with -32022 although it lists the
	// offered version (as the conformance suite's request-metadata does).
	refuseFirst := func() handlerFunc {
		n := 0
		return func(s *fakeServer, m wireMsg) reply {
			if n++; n == 1 {
				s.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32022, "message": "unsupported", "data": map[string]any{"supported": []string{modernVersion}}}})
				return reply{none: true}
			}
			return discoverOK(defaultCaps())(s, m)
		}
	}
	cases := []struct {
		name     string
		mode     string
		modern   []string // the client's modern versions (default: 2026-07-28)
		ready    time.Duration
		discover handlerFunc // nil: method not found
		status   Status      // of WaitReady
		era      string      // of the server info when ready
		methods  []string    // handshake requests the server saw, in order
	}{
		{name: "discover result is modern", mode: ModeAuto, discover: discoverOK(defaultCaps()), era: "modern", methods: []string{"server/discover"}},
		{name: "modern mode", mode: ModeModern, discover: discoverOK(defaultCaps()), era: "modern", methods: []string{"server/discover"}},
		{name: "method not found is legacy", mode: ModeAuto, era: "legacy", methods: []string{"server/discover", "initialize", "notifications/initialized"}},
		{name: "silence is legacy", mode: ModeAuto, ready: 300 * time.Millisecond, discover: func(*fakeServer, wireMsg) reply { return reply{none: true} }, era: "legacy", methods: []string{"server/discover", "initialize", "notifications/initialized"}},
		{name: "other error is legacy", mode: ModeAuto, discover: func(*fakeServer, wireMsg) reply {
			return reply{err: &rpcError{Code: -32600, Message: "not initialized"}}
		}, era: "legacy", methods: []string{"server/discover", "initialize", "notifications/initialized"}},
		{name: "unsupported version retries a common one", mode: ModeAuto, modern: []string{"2027-01-01", modernVersion}, discover: unsupported(modernVersion), era: "modern", methods: []string{"server/discover", "server/discover"}},
		{name: "unsupported version naming the offered one retries it once", mode: ModeAuto, discover: refuseFirst(), era: "modern", methods: []string{"server/discover", "server/discover"}},
		{name: "a server that keeps refusing is not retried forever", mode: ModeAuto, discover: unsupported("2026-07-28-never"), modern: []string{"2026-07-28-never"}, status: StatusUnsupported, methods: []string{"server/discover", "server/discover"}},
		{name: "unsupported version without a common one fails, no initialize", mode: ModeAuto, modern: []string{"2027-01-01"}, discover: unsupported("2028-01-01"), status: StatusUnsupported, methods: []string{"server/discover"}},
		{name: "modern mode refuses a legacy server", mode: ModeModern, status: StatusProtocol, methods: []string{"server/discover"}},
		{name: "discover listing only legacy versions uses initialize", mode: ModeAuto, discover: func(*fakeServer, wireMsg) reply {
			return reply{result: map[string]any{"supportedVersions": []string{"2025-11-25"}, "capabilities": map[string]any{}}}
		}, era: "legacy", methods: []string{"server/discover", "initialize", "notifications/initialized"}},
		{name: "legacy mode never probes", mode: ModeLegacy, discover: discoverOK(defaultCaps()), era: "legacy", methods: []string{"initialize", "notifications/initialized"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newFakeServer(t, "2025-11-25", defaultCaps())
			if tc.discover != nil {
				s.handle("server/discover", tc.discover)
			}
			opts := modernOptions(tc.mode)
			if tc.modern != nil {
				opts.Modern = tc.modern
			}
			if tc.ready > 0 {
				opts.Timeouts.Ready = tc.ready
			}
			c, err := connectWith(t, s, opts, nil)
			last := tc.methods[len(tc.methods)-1]
			_, seen := s.waitFor(func(m wireMsg) bool { return m.Method == last })
			require.True(t, seen)
			require.Equal(t, tc.methods, s.methods())
			if tc.status != StatusOK {
				require.NotNil(t, err)
				require.Equal(t, tc.status, err.Status, err.Message)
				require.Equal(t, StateFailed, c.State())
				return
			}
			require.Nil(t, errOrNil(err))
			info, ierr := c.ServerInfo()
			require.Nil(t, errOrNil(ierr))
			var si struct {
				Era             string          `json:"era"`
				ProtocolVersion string          `json:"protocolVersion"`
				ServerInfo      json.RawMessage `json:"serverInfo"`
				Instructions    string          `json:"instructions"`
			}
			require.NoError(t, json.Unmarshal(info, &si))
			require.Equal(t, tc.era, si.Era)
			if tc.era == "modern" {
				require.Equal(t, modernVersion, si.ProtocolVersion)
				require.JSONEq(t, `{"name":"modern-fake","version":"2.0"}`, string(si.ServerInfo))
				require.Equal(t, "modern and stateless", si.Instructions)
			} else {
				require.Equal(t, "2025-11-25", si.ProtocolVersion)
			}
		})
	}
}

// ModeAuto's race: after the probe grace initialize goes out alongside an
// unanswered server/discover, and the first handshake to succeed decides.
// A slow modern-only server (its initialize fails at once) is still found;
// a legacy server that never answers the probe is ready without waiting
// for the probe's timeout.
func TestDiscoveryRace(t *testing.T) {
	t.Run("slow modern-only server", func(t *testing.T) {
		// The probe is answered only once initialize has failed, whatever
		// the machine's load: a sleep before the answer, against a 600 ms
		// ready timeout, once outlasted it under make test.
		s := newFakeServer(t, "2025-11-25", defaultCaps())
		refused := make(chan struct{})
		s.handle("initialize", func(s *fakeServer, m wireMsg) reply {
			s.sendError(m.ID, -32022, "this server speaks only 2026-07-28")
			close(refused)
			return reply{none: true}
		})
		s.handle("server/discover", func(s *fakeServer, m wireMsg) reply {
			go func() {
				<-refused
				s.sendResult(m.ID, discoverOK(defaultCaps())(s, m).result)
			}()
			return reply{none: true}
		})
		opts := modernOptions(ModeAuto)
		opts.Timeouts.Ready = 3 * time.Second // grace: 1 s
		c, err := connectWith(t, s, opts, nil)
		require.Nil(t, errOrNil(err))
		info, _ := c.ServerInfo()
		require.Contains(t, string(info), `"era":"modern"`)
		_, seen := s.waitFor(func(m wireMsg) bool { return m.Method == "initialize" })
		require.True(t, seen)
		require.Equal(t, []string{"server/discover", "initialize"}, s.methods(), "initialize joined the probe, and lost")
	})
	t.Run("silent legacy server", func(t *testing.T) {
		s := newFakeServer(t, "2025-11-25", defaultCaps())
		s.handle("server/discover", func(*fakeServer, wireMsg) reply { return reply{none: true} })
		opts := modernOptions(ModeAuto)
		opts.Timeouts.Ready = 3 * time.Second // grace: 1 s
		c, err := connectWith(t, s, opts, nil)
		require.Nil(t, errOrNil(err))
		info, _ := c.ServerInfo()
		require.Contains(t, string(info), `"era":"legacy"`)
		_, seen := s.waitFor(func(m wireMsg) bool { return m.Method == "notifications/initialized" })
		require.True(t, seen)
		require.Equal(t, []string{"server/discover", "initialize", "notifications/initialized"}, s.methods())
		require.Zero(t, c.pendingCount(), "the unanswered probe is forgotten")
	})
	t.Run("both fail", func(t *testing.T) {
		s := newFakeServer(t, "2025-11-25", defaultCaps())
		s.handle("initialize", func(*fakeServer, wireMsg) reply {
			return reply{err: &rpcError{Code: -32603, Message: "broken"}}
		})
		s.handle("server/discover", func(*fakeServer, wireMsg) reply { return reply{none: true} })
		opts := modernOptions(ModeAuto)
		opts.Timeouts.Ready = 300 * time.Millisecond
		c, err := connectWith(t, s, opts, nil)
		require.NotNil(t, err)
		require.Contains(t, err.Message, "broken")
		require.Equal(t, StateFailed, c.State())
	})
}

// The handshake's requests are bounded by the ready timeout, not by the
// call defaults: with call_ms and max_total_ms far below a server's start
// time, a slow server is still found, in its own era. Before, the probe
// timed out at max_total_ms and the fallback's initialize reached a
// server that had answered server/discover on the same connection (the
// go-sdk's), which refused it as a duplicate.
func TestCallDefaultsDoNotBoundTheHandshake(t *testing.T) {
	// A start well past the call defaults, and well short of the probe
	// grace (1 s), past which initialize would join the probe by design.
	const start = 120 * time.Millisecond
	for _, tc := range []struct {
		mode, era string
		methods   []string
	}{
		{ModeAuto, "modern", []string{"server/discover"}},
		{ModeLegacy, "legacy", []string{"initialize", "notifications/initialized"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			s := newFakeServer(t, "2025-11-25", defaultCaps())
			discovered := make(chan struct{})
			s.handle("server/discover", func(s *fakeServer, m wireMsg) reply {
				go func() {
					time.Sleep(start)
					close(discovered)
					s.sendResult(m.ID, discoverOK(defaultCaps())(s, m).result)
				}()
				return reply{none: true}
			})
			legacy := s.handlers["initialize"]
			s.handle("initialize", func(s *fakeServer, m wireMsg) reply {
				select {
				case <-discovered:
					return reply{err: &rpcError{Code: -32603, Message: `duplicate "initialize" received`}}
				default:
				}
				time.Sleep(start)
				return legacy(s, m)
			})
			opts := modernOptions(tc.mode)
			opts.Timeouts.Ready = 5 * time.Second // grace: 1 s, past the start
			opts.Timeouts.Call, opts.Timeouts.MaxTotal = 20*time.Millisecond, 40*time.Millisecond
			c, err := connectWith(t, s, opts, nil)
			require.Nil(t, errOrNil(err))
			info, _ := c.ServerInfo()
			require.Contains(t, string(info), `"era":"`+tc.era+`"`)
			last := tc.methods[len(tc.methods)-1]
			_, seen := s.waitFor(func(m wireMsg) bool { return m.Method == last })
			require.True(t, seen)
			require.Equal(t, tc.methods, s.methods())
		})
	}
}

// The published 2026-07-28 puts the server's identity under
// _meta["io.modelcontextprotocol/serverInfo"]; a server written to the
// release candidate sends serverInfo, which is read when _meta has none.
// With client_info.send false, requests carry no clientInfo.
func TestDiscoverIdentityAndOptionalClientInfo(t *testing.T) {
	for _, tc := range []struct {
		name   string
		result map[string]any
		want   string
	}{
		{"published", map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "meta", "version": "1"}}, "serverInfo": map[string]any{"name": "rc", "version": "1"}}, "meta"},
		{"release candidate", map[string]any{"serverInfo": map[string]any{"name": "rc", "version": "1"}}, "rc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFakeServer(t, "2025-11-25", defaultCaps())
			s.handle("server/discover", func(*fakeServer, wireMsg) reply {
				r := map[string]any{"supportedVersions": []string{modernVersion}, "capabilities": defaultCaps()}
				for k, v := range tc.result {
					r[k] = v
				}
				return reply{result: r}
			})
			opts := modernOptions(ModeModern)
			opts.OmitClientInfo = true
			c, err := connectWith(t, s, opts, nil)
			require.Nil(t, errOrNil(err))
			info, ierr := c.ServerInfo()
			require.Nil(t, errOrNil(ierr))
			var si struct {
				ServerInfo struct {
					Name string `json:"name"`
				} `json:"serverInfo"`
			}
			require.NoError(t, json.Unmarshal(info, &si))
			require.Equal(t, tc.want, si.ServerInfo.Name)
			_, cerr := c.CallSync("tools/call", []byte(`{"name":"x","arguments":{"text":"a"}}`), CallOptions{})
			require.Nil(t, errOrNil(cerr))
			m := s.requests("tools/call")[0]
			require.NotContains(t, meta(t, m), "io.modelcontextprotocol/clientInfo")
			require.Contains(t, meta(t, m), "io.modelcontextprotocol/protocolVersion")
		})
	}
}

// legacyOnlyTransport is a memory transport that, like legacy HTTP+SSE,
// has no 2026-07-28 binding.
type legacyOnlyTransport struct{ *memory.Transport }

func (legacyOnlyTransport) LegacyOnly() bool { return true }

// On a transport with no 2026-07-28 binding (legacy HTTP+SSE) auto mode
// does not probe, even a server that would answer server/discover: the Go
// SDK's SSE handler could answer it in the modern era, before it has
// narrowed the session to the legacy versions, and then refuse roots/list
// on a connection the client speaks legacy on. Modern mode still probes.
func TestLegacyOnlyTransportIsNotProbed(t *testing.T) {
	for _, tc := range []struct {
		mode, era string
		methods   []string
	}{
		{ModeAuto, "legacy", []string{"initialize", "notifications/initialized"}},
		{ModeModern, "modern", []string{"server/discover"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			s := newFakeServer(t, "2025-11-25", defaultCaps())
			s.handle("server/discover", discoverOK(defaultCaps()))
			tr, peer := memory.NewPair(1024)
			c := New(modernOptions(tc.mode), legacyOnlyTransport{tr})
			s.peer = peer
			go s.serve()
			t.Cleanup(func() { c.Free(); close(s.stop); <-s.done })
			require.Nil(t, errOrNil(c.Connect()))
			require.Nil(t, errOrNil(c.WaitReady(5*time.Second)))
			last := tc.methods[len(tc.methods)-1]
			_, seen := s.waitFor(func(m wireMsg) bool { return m.Method == last })
			require.True(t, seen)
			require.Equal(t, tc.methods, s.methods())
			info, ierr := c.ServerInfo()
			require.Nil(t, errOrNil(ierr))
			var si struct {
				Era string `json:"era"`
			}
			require.NoError(t, json.Unmarshal(info, &si))
			require.Equal(t, tc.era, si.Era)
		})
	}
}
