package legacysse

import (
	"context"
	"net/http"
	"sync"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/httpclient"
	"github.com/lemonmcp/lemonmcp/transport/internal/runners"
)

// Transport talks to one HTTP+SSE server. Create it with New.
type Transport struct {
	cfg       *settings
	client    *http.Client
	ownClient bool

	mu        sync.Mutex
	state     int
	down      bool // the stream ended or Close was called: no new POSTs
	requested bool // Close was called
	sink      transport.Sink
	endpoint  string // where messages are POSTed, resolved and checked

	// ctx is the stream's lifetime: cancelled when it ends or on Close,
	// which aborts every POST too. posts counts POSTs in flight.
	ctx    context.Context
	cancel context.CancelFunc
	posts  sync.WaitGroup
	done   chan struct{} // closed once Closed has been delivered

	// runners make the requests' POSTs (each runner holds a unit of posts
	// while it lives).
	runners runners.Pool[queuedPost]

	// waiting ends each POST under way on its waiting sender, by request
	// id (Abort).
	waitMu  sync.Mutex
	waiting map[int64]context.CancelFunc
}

// queuedPost is a request's POST, as a runner makes it.
type queuedPost struct {
	id       int64
	endpoint string
	body     []byte
	what     string
	onCaller bool // made on its waiting sender's goroutine (Send)
	thread   bool // that sender is a thread outside Go (transport.Outbound.Thread)
}

const (
	stateNew = iota
	stateStarting
	stateStarted
	stateClosed
)

var (
	_ transport.Transport = (*Transport)(nil)
	_ transport.Aborter   = (*Transport)(nil)
)

// New checks cfg and returns a transport ready to Start. Errors are
// *transport.Error with CodeInvalidArgument, naming the field at fault.
func New(cfg Config) (*Transport, error) {
	s, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	t := &Transport{cfg: s, client: s.HTTPClient, done: make(chan struct{})}
	if t.client == nil {
		t.client, t.ownClient = httpclient.NewClient(s.WrapTransport), true
	} else {
		t.client = httpclient.WrapClient(t.client, s.WrapTransport)
	}
	return t, nil
}

// LegacyOnly implements transport.LegacyOnly: 2026-07-28 defines no
// HTTP+SSE binding, and a dual-era server may still answer a
// server/discover sent here (see core.Client's legacyOnly).
func (t *Transport) LegacyOnly() bool { return true }

// Name returns "sse".
func (t *Transport) Name() string { return "sse" }

// Endpoint is the URL messages are POSTed to, once Start has succeeded.
func (t *Transport) Endpoint() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.endpoint
}

// newRequest builds a request with the configured headers, then the
// transport's own, which therefore always win.
func (t *Transport) newRequest(ctx context.Context, method, target string, body []byte) *http.Request {
	var req *http.Request
	if body != nil {
		req, _ = http.NewRequestWithContext(ctx, method, target, bytesReader(body))
	} else {
		req, _ = http.NewRequestWithContext(ctx, method, target, nil)
	}
	for name, values := range t.cfg.headers {
		req.Header[name] = values
	}
	req.Header.Set("User-Agent", t.cfg.UserAgent)
	return req
}

func (t *Transport) log(level, text string) {
	t.sink.Log(transport.LogLine{Level: level, Source: "transport", Text: text})
}

// Networked implements transport.Networked.
func (t *Transport) Networked() bool { return true }
