package gateway

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Bounds of one SSE stream's log: a front that reads nothing for this
// long is cut off rather than the gateway's memory growing.
const (
	maxStreamEvents = 4096
	maxStreamBytes  = 64 << 20
)

// sseStream is one SSE stream of a session (a POST's reply stream, or the
// GET stream): senders append to its log and never wait; the HTTP handler
// attached to it writes the log out. Its events have ids "stream:seq", so
// a front that lost the connection resumes with Last-Event-ID.
type sseStream struct {
	id   string
	sess *Session

	mu       sync.Mutex
	cond     *sync.Cond
	events   [][]byte // events[i] has seq base+i+1
	base     int
	bytes    int
	ended    bool // no more events (final sent, or closed)
	attached int  // generation of the attached writer; 0: none
	gens     int
	grace    *time.Timer
	orphaned func() // runs when nobody resumed within resumeGrace
}

func newStream(sess *Session, id string) *sseStream {
	st := &sseStream{id: id, sess: sess}
	st.cond = sync.NewCond(&st.mu)
	return st
}

func (st *sseStream) send(msg []byte) bool {
	if msg == nil {
		return true
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ended {
		return false
	}
	if len(st.events) >= maxStreamEvents || st.bytes+len(msg) > maxStreamBytes {
		st.ended = true
		st.cond.Broadcast()
		return false
	}
	st.events = append(st.events, msg)
	st.bytes += len(msg)
	st.cond.Broadcast()
	return true
}

// final sends the last event and ends the stream.
func (st *sseStream) final(msg []byte) {
	st.send(msg)
	st.close()
}

func (st *sseStream) close() {
	st.mu.Lock()
	st.ended = true
	if st.grace != nil {
		st.grace.Stop()
	}
	st.cond.Broadcast()
	st.mu.Unlock()
}

// serve writes the stream to w from the event after seq until it ends or
// the front goes (done). It returns whether the stream ended.
func (st *sseStream) serve(w http.ResponseWriter, done <-chan struct{}, after int) bool {
	flusher, _ := w.(http.Flusher)
	st.mu.Lock()
	st.gens++
	gen := st.gens
	st.attached = gen
	if st.grace != nil {
		st.grace.Stop()
		st.grace = nil
	}
	st.mu.Unlock()
	stopWake := make(chan struct{})
	defer close(stopWake)
	go func() {
		select {
		case <-done:
			st.mu.Lock()
			st.cond.Broadcast()
			st.mu.Unlock()
		case <-stopWake:
		}
	}()
	next := after + 1
	var buf []byte
	for {
		st.mu.Lock()
		for next > st.base+len(st.events) && !st.ended && st.attached == gen && !isDone(done) {
			st.cond.Wait()
		}
		if st.attached != gen || isDone(done) {
			st.detachLocked(gen)
			st.mu.Unlock()
			return false
		}
		if next <= st.base {
			next = st.base + 1 // what was trimmed is gone
		}
		batch := st.events[next-st.base-1:]
		first := next
		next += len(batch)
		ended := st.ended && next > st.base+len(st.events)
		st.mu.Unlock()
		buf = buf[:0]
		for i, ev := range batch {
			buf = append(buf, "id: "...)
			buf = append(buf, st.id...)
			buf = append(buf, ':')
			buf = strconv.AppendInt(buf, int64(first+i), 10)
			buf = append(buf, "\nevent: message\ndata: "...)
			buf = append(buf, ev...)
			buf = append(buf, "\n\n"...)
		}
		if len(buf) > 0 {
			if _, err := w.Write(buf); err != nil {
				st.mu.Lock()
				st.detachLocked(gen)
				st.mu.Unlock()
				return false
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if ended {
			st.mu.Lock()
			if st.attached == gen {
				st.attached = 0
			}
			st.mu.Unlock()
			return true
		}
	}
}

// detachLocked notes the writer gone; a stream not ended waits the
// options' ResumeGrace for a resumption (a GET with Last-Event-ID), then
// runs orphaned: its call is cancelled upstream.
func (st *sseStream) detachLocked(gen int) {
	if st.attached != gen {
		return
	}
	st.attached = 0
	if st.ended || st.orphaned == nil {
		return
	}
	orphaned := st.orphaned
	st.grace = time.AfterFunc(st.sess.srv.opts.ResumeGrace, func() {
		st.mu.Lock()
		gone := st.attached == 0 && !st.ended
		st.mu.Unlock()
		if gone {
			orphaned()
		}
	})
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// parseEventID reads "stream:seq".
func parseEventID(id string) (string, int, bool) {
	i := strings.LastIndexByte(id, ':')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(id[i+1:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return id[:i], n, true
}
