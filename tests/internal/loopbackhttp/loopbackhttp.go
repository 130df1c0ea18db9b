// Package loopbackhttp starts an HTTP or HTTPS server on 127.0.0.1 for the
// tests that must stay off the network: fake registries a sandboxed npx or
// uvx fetches from. An HTTPS server gets a throwaway CA of its own, written
// to a PEM file the client is pointed at (NODE_EXTRA_CA_CERTS,
// SSL_CERT_FILE), and a certificate for 127.0.0.1, ::1 and localhost signed
// by it: a leaf that is not itself a CA, as rustls (uv) insists.
package loopbackhttp

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Server is a running loopback server.
type Server struct {
	// URL is its base, "https://127.0.0.1:PORT" (no trailing slash).
	URL string
	// Port is the port it listens on.
	Port string
	// CAFile is the PEM file of the CA that signed its certificate; empty
	// for plain HTTP.
	CAFile string

	srv *httptest.Server
	dir string

	mu       sync.Mutex
	requests []string
}

// Requests lists what the server was asked, "GET /path" each, in order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Start serves h on 127.0.0.1 on a free port, over TLS when withTLS, and
// records every request.
func Start(h http.Handler, withTLS bool) (*Server, error) {
	s := &Server{}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	if withTLS {
		dir, err := os.MkdirTemp("", "loopbackhttp-")
		if err != nil {
			return nil, err
		}
		s.dir = dir
		cert, caPEM, err := throwawayCert()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s.CAFile = filepath.Join(dir, "ca.pem")
		if err := os.WriteFile(s.CAFile, caPEM, 0o644); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		s.srv.StartTLS()
	} else {
		s.srv.Start()
	}
	s.URL = s.srv.URL
	_, s.Port, _ = net.SplitHostPort(s.srv.Listener.Addr().String())
	return s, nil
}

// Stop closes the server, its connections and its CA file.
func (s *Server) Stop() {
	s.srv.CloseClientConnections()
	s.srv.Close()
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// throwawayCert makes a CA and a server certificate it signs, both valid
// for a day around now, and returns the server's key pair and the CA's PEM.
func throwawayCert() (tls.Certificate, []byte, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "lemonmcp test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	ca, err = x509.ParseCertificate(caDER)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf := &x509.Certificate{
		SerialNumber:          big.NewInt(2),
		Subject:               pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              []string{"localhost"},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	cert := tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key}
	return cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), nil
}
