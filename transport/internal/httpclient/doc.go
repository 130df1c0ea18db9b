// Package httpclient holds what the two HTTP transports share: checking the
// configured URL and headers, the default *http.Client, and turning HTTP
// statuses and network errors into transport errors whose messages are safe
// to show (no URLs, which may carry tokens in their query; no header values;
// at most a short, sanitized excerpt of an error body).
package httpclient
