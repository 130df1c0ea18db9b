// Package fakepypi is a minimal Python package index on loopback
// (loopbackhttp): the simple API of PEP 503 (HTML) and PEP 691 (JSON) for
// one project, Project, whose one wheel, pure Python and built in-process,
// has a console script of the same name that is a tiny stdio MCP server
// (server.py, standard library only): what `uvx Project` fetches and runs.
package fakepypi

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	_ "embed"

	"github.com/lemonmcp/lemonmcp/tests/internal/loopbackhttp"
)

// Project and Version name what the index serves.
const (
	Project = "lemonmcp-fake-pypi-server"
	Version = "1.0.0"
)

// module is the wheel's import name.
const module = "lemonmcp_fake_pypi_server"

//go:embed server.py
var serverPy []byte

// Index is the running index; IndexURL is its simple API's root (for
// UV_DEFAULT_INDEX or UV_INDEX_URL), Requests what was fetched.
type Index struct {
	*loopbackhttp.Server
	IndexURL string
}

// WheelName is the one file the index serves.
var WheelName = module + "-" + Version + "-py3-none-any.whl"

// Start serves the index on 127.0.0.1, over HTTPS with a throwaway CA when
// withTLS (point uv at it with SSL_CERT_FILE=CAFile).
func Start(withTLS bool) (*Index, error) {
	whl, err := wheel()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(whl)
	digest := hex.EncodeToString(sum[:])
	ix := &Index{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /simple/{project}/", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("project") != Project {
			http.NotFound(w, r)
			return
		}
		file := ix.URL + "/files/" + WheelName
		if strings.Contains(r.Header.Get("Accept"), "application/vnd.pypi.simple.v1+json") {
			w.Header().Set("Content-Type", "application/vnd.pypi.simple.v1+json")
			_ = json.NewEncoder(w).Encode(map[string]any{
				"meta": map[string]string{"api-version": "1.0"}, "name": Project,
				"files": []map[string]any{{"filename": WheelName, "url": file, "hashes": map[string]string{"sha256": digest}}},
			})
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<!DOCTYPE html><html><body><a href=\"%s#sha256=%s\">%s</a></body></html>\n", file, digest, WheelName)
	})
	mux.HandleFunc("GET /files/"+WheelName, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(whl)
	})
	if ix.Server, err = loopbackhttp.Start(mux, withTLS); err != nil {
		return nil, err
	}
	ix.IndexURL = ix.URL + "/simple/"
	return ix, nil
}

// wheel builds the wheel: the module, its dist-info (METADATA, WHEEL, the
// console script in entry_points.txt) and a RECORD with every file's hash.
func wheel() ([]byte, error) {
	distInfo := module + "-" + Version + ".dist-info/"
	files := []struct{ name, body string }{
		{module + "/__init__.py", string(serverPy)},
		{distInfo + "METADATA", "Metadata-Version: 2.1\nName: " + Project + "\nVersion: " + Version + "\nSummary: A tiny stdio MCP server for LemonMCP's tests\n"},
		{distInfo + "WHEEL", "Wheel-Version: 1.0\nGenerator: lemonmcp-fakepypi\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{distInfo + "entry_points.txt", "[console_scripts]\n" + Project + " = " + module + ":main\n"},
	}
	var record strings.Builder
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name, body string) error {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: time.Unix(1767225600, 0)})
		if err != nil {
			return err
		}
		_, err = w.Write([]byte(body))
		return err
	}
	for _, f := range files {
		if err := add(f.name, f.body); err != nil {
			return nil, err
		}
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	record.WriteString(distInfo + "RECORD,,\n")
	if err := add(distInfo+"RECORD", record.String()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
