package host

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParsePins(t *testing.T) {
	cases := []struct {
		name, pins, err string
		want            *PinsConfig
	}{
		{"file, trust by default", `{"store":"/tmp/p.json"}`, "", &PinsConfig{Store: "/tmp/p.json", FirstUse: FirstUseTrust}},
		{"hold", `{"store":"p.json","first_use":"hold"}`, "", &PinsConfig{Store: "p.json", FirstUse: FirstUseHold}},
		{"no store", `{"first_use":"hold"}`, "config.pins.store: is required", nil},
		{"bad first_use", `{"store":"p","first_use":"yes"}`, `config.pins.first_use: must be "trust" or "hold"`, nil},
		{"unknown member", `{"store":"p","mode":1}`, "config.pins.mode: is not a known field", nil},
		{"not an object", `true`, "config.pins: must be a JSON object", nil},
		{"app store", `{"store":"app","first_use":"hold"}`, "", &PinsConfig{Store: PinStoreApp, FirstUse: FirstUseHold}},
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

func TestPinFile(t *testing.T) {
	t.Run("created 0600, versioned, read back", func(t *testing.T) {
		f := &pinFile{path: filepath.Join(t.TempDir(), "sub", "pins.json")}
		_, err := f.update(func(d *pinDoc) (bool, error) {
			d.Servers["k"] = &pinServer{Name: "a", Kinds: map[string]map[string]*pinEntry{"tools": {"t": {Hash: "sha256:1"}}}}
			return true, nil
		})
		require.NoError(t, err)
		st, err := os.Stat(f.path)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
		doc, err := f.load()
		require.NoError(t, err)
		require.Equal(t, 1, doc.Version)
		require.Equal(t, "sha256:1", doc.Servers["k"].Kinds["tools"]["t"].Hash)
		left, _ := filepath.Glob(filepath.Join(filepath.Dir(f.path), ".pins.json.*"))
		require.Empty(t, left, "no temporary file left behind")
	})
	for _, tc := range []struct{ name, content, err string }{
		{"corrupt", `{"version":1,"servers":`, "is not a valid pin file"},
		{"not an object", `[1]`, "is not a valid pin file"},
		{"no version", `{"servers":{}}`, `no "version"`},
		{"newer", `{"version":2,"servers":{}}`, "has version 2, newer than this library's 1"},
		{"null server", `{"version":1,"servers":{"k":null}}`, "is null"},
	} {
		t.Run(tc.name+" is an error naming the file, never reset", func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "pins.json")
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o600))
			f := &pinFile{path: path}
			_, err := f.load()
			require.Error(t, err)
			require.Contains(t, err.Error(), path)
			require.Contains(t, err.Error(), tc.err)
			_, err = f.update(func(*pinDoc) (bool, error) { return true, nil })
			require.Error(t, err)
			after, _ := os.ReadFile(path)
			require.Equal(t, tc.content, string(after), "left as it is")
		})
	}
	t.Run("concurrent updates lose nothing", func(t *testing.T) {
		// Each update opens the lock file itself, as another process
		// would: the flock serialises the read-modify-write.
		f := &pinFile{path: filepath.Join(t.TempDir(), "pins.json")}
		var wg sync.WaitGroup
		errs := make([]error, 16)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = f.update(func(d *pinDoc) (bool, error) {
					d.Servers[strconv.Itoa(i)] = &pinServer{Name: strconv.Itoa(i)}
					return true, nil
				})
			}()
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		doc, err := f.load()
		require.NoError(t, err)
		require.Len(t, doc.Servers, 16)
	})
}
