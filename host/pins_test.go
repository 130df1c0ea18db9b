package host

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/store"
	"github.com/lemonmcp/lemonmcp/store/storetest"
)

func TestParsePins(t *testing.T) {
	cases := []struct {
		name, pins, err string
		want            *PinsConfig
	}{
		{"file, trust by default", `{"store":{"type":"file","path":"/tmp/p.json"}}`, "", &PinsConfig{Store: store.Spec{Type: "file", Path: "/tmp/p.json"}, FirstUse: FirstUseTrust}},
		{"hold", `{"store":{"type":"memory"},"first_use":"hold"}`, "", &PinsConfig{Store: store.Spec{Type: "memory"}, FirstUse: FirstUseHold}},
		{"app store", `{"store":{"type":"app"},"first_use":"hold"}`, "", &PinsConfig{Store: store.Spec{Type: "app"}, FirstUse: FirstUseHold}},
		{"sealed redis", `{"store":{"type":"redis","url":"redis://127.0.0.1:1/0","encryption":{"key_env":"PINS_KEY","previous_key_envs":["OLD"]}}}`, "",
			&PinsConfig{Store: store.Spec{Type: "redis", URL: "redis://127.0.0.1:1/0", Encryption: &store.Encryption{KeyEnv: "PINS_KEY", PreviousKeyEnvs: []string{"OLD"}}}, FirstUse: FirstUseTrust}},
		{"no store", `{"first_use":"hold"}`, "config.pins.store: is required", nil},
		{"retired path", `{"store":"/tmp/p.json"}`, `config.pins.store: a path is retired: write {"type": "file", "path": "/tmp/p.json"}`, nil},
		{"retired app", `{"store":"app"}`, `config.pins.store: "app" is retired: write {"type": "app"} and answer the store_load / store_save requests`, nil},
		{"no type", `{"store":{"path":"p"}}`, "config.pins.store.type: is required", nil},
		{"file without path", `{"store":{"type":"file"}}`, "config.pins.store.path: is required", nil},
		{"key env not a name", `{"store":{"type":"memory","encryption":{"key_env":"a b"}}}`, "config.pins.store.encryption.key_env: must be the name of an environment variable", nil},
		{"bad first_use", `{"store":{"type":"memory"},"first_use":"yes"}`, `config.pins.first_use: must be "trust" or "hold"`, nil},
		{"unknown member", `{"store":{"type":"memory"},"mode":1}`, "config.pins.mode: is not a known field", nil},
		{"not an object", `true`, "config.pins: must be a JSON object", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(`{"pins":` + tc.pins + `,"mcpServers":{"a":{"command":"x"}}}`))
			if tc.err != "" {
				require.NotNil(t, err)
				require.Contains(t, err.Message, tc.err)
				return
			}
			require.Nil(t, err)
			require.Equal(t, tc.want, cfg.Pins)
		})
	}
}

func TestServerIdentity(t *testing.T) {
	key := func(name, transport string) string {
		k, _ := serverIdentity(name, []byte(`{"transport":`+transport+`}`))
		return k
	}
	base := key("a", `{"type":"stdio","command":"srv","args":["-x"],"cwd":"/w"}`)
	require.Equal(t, base, key("a", `{"type":"stdio","command":"srv","args":["-x"],"cwd":"/w","env":{"TOKEN":"s3cret"}}`), "env is not the identity")
	require.NotEqual(t, base, key("b", `{"type":"stdio","command":"srv","args":["-x"],"cwd":"/w"}`), "the name is")
	require.NotEqual(t, base, key("a", `{"type":"stdio","command":"srv","args":["-y"],"cwd":"/w"}`), "the arguments are")
	require.NotEqual(t, base, key("a", `{"type":"stdio","command":"srv","args":["-x"],"cwd":"/v"}`), "the working directory is")
	url := key("a", `{"type":"http","url":"https://a.example/mcp"}`)
	require.Equal(t, url, key("a", `{"type":"http","url":"https://a.example/mcp","headers":{"Authorization":"Bearer t"}}`), "headers are not")
	require.NotEqual(t, url, key("a", `{"type":"http","url":"https://b.example/mcp"}`))
}

// TestPinDocs: a server's pins are one document of the store's "pins"
// collection, read back at the same version as the same pins; a
// document that is not pins is an error, never reset; updates made at
// once (as by processes sharing the store) are all kept, on every
// backend.
func TestPinDocs(t *testing.T) {
	for name, s := range storetest.All(t) {
		t.Run(name, func(t *testing.T) {
			p := newPinDocs(s)
			ident := fmt.Sprintf("sha256:%s-%d", t.Name(), time.Now().UnixNano())
			ps, ver, err := p.load(ident)
			require.NoError(t, err)
			require.Nil(t, ps)
			require.Zero(t, ver)

			var wg sync.WaitGroup
			errs := make([]error, 8)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = p.update(ident, "a", map[string]any{"name": "a"}, func(ps *pinServer) (bool, error) {
						if ps.Kinds["tools"] == nil {
							ps.Kinds["tools"] = map[string]*pinEntry{}
						}
						ps.Kinds["tools"][strconv.Itoa(i)] = &pinEntry{Hash: "sha256:" + strconv.Itoa(i)}
						return true, nil
					})
				}()
			}
			wg.Wait()
			for _, err := range errs {
				require.NoError(t, err)
			}
			ps, ver, err = p.load(ident)
			require.NoError(t, err)
			require.Len(t, ps.Kinds["tools"], 8, "an approval made at once was lost")
			again, ver2, err := p.load(ident)
			require.NoError(t, err)
			require.Equal(t, ver, ver2)
			require.Same(t, ps, again, "the same version answers the same pins")

			_, _, err = s.CompareAndSave(context.Background(), pinCollection, ident+"-bad", 0, &store.Document{Body: []byte(`[1]`)})
			require.NoError(t, err)
			_, _, err = p.load(ident + "-bad")
			require.ErrorContains(t, err, "is not a pin document")
			_, err = p.update(ident+"-bad", "a", nil, func(*pinServer) (bool, error) { return true, nil })
			require.ErrorContains(t, err, "is not a pin document")
		})
	}
}
