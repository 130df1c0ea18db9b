// Package fakenpm is a minimal npm registry on loopback (loopbackhttp)
// serving one package, Package, whose bin is a tiny stdio MCP server
// (server.js, answering initialize, tools/list and an echo tool) with no
// dependencies: what `npx -y Package` fetches and runs. The packument and
// the tarball are built in-process, the tarball's integrity with them.
package fakenpm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"

	_ "embed"

	"github.com/lemonmcp/lemonmcp/tests/internal/loopbackhttp"
)

// Package and Version name what the registry serves.
const (
	Package = "lemonmcp-fake-npm-server"
	Version = "1.0.0"
)

//go:embed server.js
var serverJS []byte

// Registry is the running registry; its Requests say what npm fetched.
type Registry struct {
	*loopbackhttp.Server
}

// Start serves the registry on 127.0.0.1 (over HTTPS with a throwaway CA
// when withTLS: point npm at it with NODE_EXTRA_CA_CERTS=CAFile).
func Start(withTLS bool) (*Registry, error) {
	tgz, err := tarball()
	if err != nil {
		return nil, err
	}
	r := &Registry{}
	mux := http.NewServeMux()
	tarPath := "/" + Package + "/-/" + Package + "-" + Version + ".tgz"
	mux.HandleFunc("GET /"+Package, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(packument(r.URL+tarPath, tgz))
	})
	mux.HandleFunc("GET "+tarPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(tgz)
	})
	if r.Server, err = loopbackhttp.Start(mux, withTLS); err != nil {
		return nil, err
	}
	return r, nil
}

// packument is the package's document, as npm asks it (abbreviated or
// not, the same members suffice).
func packument(tarURL string, tgz []byte) map[string]any {
	s512 := sha512.Sum512(tgz)
	s1 := sha1.Sum(tgz)
	manifest := map[string]any{
		"name": Package, "version": Version,
		"bin": map[string]string{Package: "server.js"},
		"dist": map[string]string{
			"tarball":   tarURL,
			"shasum":    hex.EncodeToString(s1[:]),
			"integrity": "sha512-" + base64.StdEncoding.EncodeToString(s512[:]),
		},
	}
	return map[string]any{
		"name": Package, "dist-tags": map[string]string{"latest": Version},
		"versions": map[string]any{Version: manifest},
		"modified": "2026-01-01T00:00:00.000Z",
	}
}

// tarball is the package as npm packs it: package/package.json and
// package/server.js, gzipped.
func tarball() ([]byte, error) {
	pkgJSON, err := json.Marshal(map[string]any{
		"name": Package, "version": Version, "bin": map[string]string{Package: "server.js"},
	})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range []struct {
		name string
		mode int64
		body []byte
	}{{"package/package.json", 0o644, pkgJSON}, {"package/server.js", 0o755, serverJS}} {
		hdr := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body)), ModTime: time.Unix(1767225600, 0), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
