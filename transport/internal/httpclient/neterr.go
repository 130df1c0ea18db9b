package httpclient

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/url"
	"syscall"
)

// Describe says what went wrong with a request in a few words. It never
// includes the request URL (net/http puts it in every *url.Error, query and
// all).
func Describe(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var dns *net.DNSError
	var cert *tls.CertificateVerificationError
	var ne net.Error
	switch {
	case err == nil:
		return "unknown error"
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "the connection was reset"
	case errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the server closed the connection"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "the server's network is unreachable"
	case errors.As(err, &dns):
		return "cannot resolve the server's host name"
	case errors.As(err, &cert):
		return "the server's TLS certificate was not accepted: " + cert.Err.Error()
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	}
	return err.Error()
}
