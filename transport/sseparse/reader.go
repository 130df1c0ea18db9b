package sseparse

import (
	"bytes"
	"io"
	"math"
	"sync"
	"time"
)

const (
	// MaxFieldBytes bounds the value of an event, id or retry field. They
	// are short by nature; only data carries messages.
	MaxFieldBytes = 4 << 10
	// HeadBytes is how much of an oversized event's data TooLargeError
	// keeps.
	HeadBytes = 1 << 10

	// readBufBytes is the read buffer. Data bytes are copied from it into
	// the data buffer, so it only sets how much one Read may bring in.
	readBufBytes = 32 << 10
	// maxNameBytes: a longer field name is no field the reader knows, so
	// the line is skipped without keeping the name.
	maxNameBytes = 16
	// retainBytes caps the data buffer kept between events, so one large
	// message does not pin its size for the rest of the stream.
	retainBytes = 1 << 20
	// maxEmptyReads guards against a source that returns 0, nil forever.
	maxEmptyReads = 100
	// segBytes is the size of the segments a large event's data is kept
	// in. Data up to this size grows as an ordinary slice; past it, full
	// segments are set aside unchanged and joined once at the event's end,
	// so that growing never copies what was read, and an event that goes
	// over the limit has cost about the limit in memory (growing one slice
	// by append cost five times the limit in allocations).
	segBytes = 64 << 10
)

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

type field uint8

const (
	fieldIgnore field = iota
	fieldData
	fieldEvent
	fieldID
	fieldRetry
)

var fieldNames = [...]string{fieldData: "data", fieldEvent: "event", fieldID: "id", fieldRetry: "retry"}

// lineState is where the reader is within the current line.
type lineState uint8

const (
	inName   lineState = iota // reading the field name
	atValue                   // just past the colon: one space may follow
	inValue                   // reading the field value
	skipLine                  // discarding up to the end of the line
)

// Reader reads events from a text/event-stream. It is not safe for
// concurrent use.
type Reader struct {
	src   io.Reader
	limit int

	buf  []byte
	r, w int   // buf[r:w] is unread
	rerr error // the source's error, returned once buf is drained

	bomChecked bool
	afterCR    bool // the last line ended with CR: a following LF is part of it

	state   lineState
	name    [maxNameBytes]byte
	nameLen int
	field   field
	value   []byte // the value of an event, id or retry field

	data     []byte   // the event's data, or its last segment when segs is not empty
	segs     [][]byte // full segments before data
	segLen   int      // their total size
	free     [][]byte // segments kept for reuse (at most retainBytes)
	joined   []byte   // reused buffer segments are joined into
	hasData  bool     // a data field was seen: "data:" alone makes empty data
	typ      []byte
	idBuf    []byte // the last event ID buffer, kept across events
	lastID   string
	retry    time.Duration
	hasRetry bool
	skipping bool // the current event went over a limit
}

// readBufs recycles read buffers: an HTTP client opens a stream per
// request, and a fresh 32 KiB each time would be most of its garbage.
var readBufs = sync.Pool{New: func() any { b := make([]byte, readBufBytes); return &b }}

// NewReader reads events from src. limit bounds one event's data in bytes
// (a value below 1 means 1). Call Release when done with the reader.
func NewReader(src io.Reader, limit int) *Reader {
	return &Reader{src: src, limit: max(limit, 1), buf: *readBufs.Get().(*[]byte)}
}

// Release returns the reader's read buffer for reuse. The reader, and any
// Event it returned, must not be used afterwards. Calling it is optional
// (without it the buffer is just garbage) and idempotent.
func (r *Reader) Release() {
	if r.buf == nil {
		return
	}
	b := r.buf
	r.buf, r.r, r.w = nil, 0, 0
	if r.rerr == nil {
		r.rerr = io.ErrClosedPipe
	}
	readBufs.Put(&b)
}

// Next returns the next event. At the end of the stream it returns io.EOF
// (an incomplete last event is discarded, as the standard says); after a
// read error, that error. A *TooLargeError reports an event over the
// limits; the reader skips the rest of it, and Next may be called again.
// Events without any data field are not returned, but their id still
// updates LastEventID.
func (r *Reader) Next() (Event, error) {
	if cap(r.data) > retainBytes {
		r.data = nil
	}
	if cap(r.joined) > retainBytes {
		r.joined = nil
	}
	r.data = r.data[:0]
	if !r.bomChecked {
		r.skipBOM()
	}
	for {
		if r.r < r.w {
			ev, ok, err := r.scan()
			if err != nil || ok {
				return ev, err
			}
			continue
		}
		if r.rerr != nil {
			return Event{}, r.rerr
		}
		r.fill()
	}
}

// LastEventID is the stream's last event ID: what a reconnecting client
// sends as Last-Event-ID. It is empty until an event set one.
func (r *Reader) LastEventID() string { return r.lastID }

// Retry is the reconnection delay the stream asked for with its last valid
// retry field, if any.
func (r *Reader) Retry() (time.Duration, bool) { return r.retry, r.hasRetry }

func (r *Reader) fill() {
	r.r, r.w = 0, 0
	for empty := 0; r.w == 0 && r.rerr == nil; empty++ {
		if empty == maxEmptyReads {
			r.rerr = io.ErrNoProgress
			return
		}
		r.w, r.rerr = r.src.Read(r.buf)
	}
}

// skipBOM reads until three bytes are buffered (or the stream ends) and
// drops a leading byte order mark.
func (r *Reader) skipBOM() {
	r.bomChecked = true
	for empty := 0; r.w < len(utf8BOM) && r.rerr == nil && empty < maxEmptyReads; empty++ {
		n, err := r.src.Read(r.buf[r.w:])
		r.w += n
		r.rerr = err
	}
	if bytes.HasPrefix(r.buf[r.r:r.w], utf8BOM) {
		r.r += len(utf8BOM)
	}
}

// scan consumes buffered bytes until an event is complete, an event goes
// over a limit, or the buffer is empty.
func (r *Reader) scan() (Event, bool, error) {
	for r.r < r.w {
		b := r.buf[r.r:r.w]
		if r.afterCR {
			r.afterCR = false
			if b[0] == '\n' {
				r.r++
				continue
			}
		}
		switch r.state {
		case inName:
			room := maxNameBytes - r.nameLen
			n := min(len(b), room+1)
			i := 0
			for i < n && b[i] != ':' && b[i] != '\n' && b[i] != '\r' {
				i++
			}
			if i > room {
				// Too long to be a field the reader knows.
				r.r += i
				r.state = skipLine
				continue
			}
			r.nameLen += copy(r.name[r.nameLen:], b[:i])
			r.r += i
			if i == len(b) {
				continue // the name goes on in the next read
			}
			c := b[i]
			r.r++
			if c == ':' {
				if r.nameLen == 0 {
					r.state = skipLine // a comment
					continue
				}
				r.state = atValue
				if err := r.beginField(); err != nil {
					return Event{}, false, err
				}
				continue
			}
			r.afterCR = c == '\r'
			if r.nameLen == 0 {
				if ev, ok := r.dispatch(); ok {
					return ev, true, nil
				}
				continue
			}
			// A field name alone on its line: the value is empty.
			err := r.beginField()
			if err == nil {
				r.endField()
			}
			r.state, r.nameLen = inName, 0
			if err != nil {
				return Event{}, false, err
			}
		case atValue:
			if b[0] == ' ' {
				r.r++
			}
			r.state = inValue
		case inValue:
			end, term := lineEnd(b)
			err := r.appendValue(b[:end])
			r.r += end
			if err != nil {
				return Event{}, false, err // the state is skipLine now
			}
			if term != 0 {
				r.r++
				r.afterCR = term == '\r'
				r.endField()
				r.state, r.nameLen = inName, 0
			}
		case skipLine:
			end, term := lineEnd(b)
			r.r += end
			if term != 0 {
				r.r++
				r.afterCR = term == '\r'
				r.state, r.nameLen = inName, 0
			}
		}
	}
	return Event{}, false, nil
}

// lineEnd finds the first CR or LF in b: its index and the byte, or len(b)
// and 0 when the line goes on past b.
func lineEnd(b []byte) (int, byte) {
	lf := bytes.IndexByte(b, '\n')
	seg := b
	if lf >= 0 {
		seg = b[:lf]
	}
	if cr := bytes.IndexByte(seg, '\r'); cr >= 0 {
		return cr, '\r'
	}
	if lf >= 0 {
		return lf, '\n'
	}
	return len(b), 0
}

// beginField starts the value of the field just named.
func (r *Reader) beginField() error {
	r.field = fieldIgnore
	if r.skipping {
		return nil
	}
	switch string(r.name[:r.nameLen]) {
	case "data":
		r.field = fieldData
		if r.hasData {
			if r.dataLen()+1 > r.limit {
				return r.dataOverflow([]byte{'\n'})
			}
			r.appendData([]byte{'\n'})
		}
		r.hasData = true
	case "event":
		r.field = fieldEvent
	case "id":
		r.field = fieldID
	case "retry":
		r.field = fieldRetry
	}
	r.value = r.value[:0]
	return nil
}

func (r *Reader) appendValue(chunk []byte) error {
	switch r.field {
	case fieldIgnore:
		return nil
	case fieldData:
		if r.dataLen()+len(chunk) > r.limit {
			return r.dataOverflow(chunk)
		}
		r.appendData(chunk)
		return nil
	}
	if len(r.value)+len(chunk) > MaxFieldBytes {
		return r.overflow(&TooLargeError{Field: fieldNames[r.field], Limit: MaxFieldBytes})
	}
	r.value = append(r.value, chunk...)
	return nil
}

// dataLen is the size of the event's data so far.
func (r *Reader) dataLen() int { return r.segLen + len(r.data) }

// appendData adds chunk to the event's data: to one ordinary slice while
// it fits a segment, then segment by segment.
func (r *Reader) appendData(chunk []byte) {
	if len(r.segs) == 0 && len(r.data)+len(chunk) <= segBytes {
		r.data = append(r.data, chunk...)
		return
	}
	if cap(r.data) < segBytes {
		grown := make([]byte, len(r.data), segBytes)
		copy(grown, r.data)
		r.data = grown
	}
	for len(chunk) > 0 {
		if len(r.data) == cap(r.data) {
			r.segs = append(r.segs, r.data)
			r.segLen += len(r.data)
			if n := len(r.free); n > 0 {
				r.data, r.free = r.free[n-1][:0], r.free[:n-1]
			} else {
				r.data = make([]byte, 0, segBytes)
			}
		}
		n := min(cap(r.data)-len(r.data), len(chunk))
		r.data = append(r.data, chunk[:n]...)
		chunk = chunk[n:]
	}
}

// releaseSegs drops the event's full segments, keeping a few for reuse.
func (r *Reader) releaseSegs() {
	for _, seg := range r.segs {
		if (len(r.free)+1)*segBytes <= retainBytes {
			r.free = append(r.free, seg)
		}
	}
	r.segs, r.segLen = nil, 0
}

// eventData is the event's data as one slice: data itself when it fits a
// segment, else the segments joined.
func (r *Reader) eventData() []byte {
	if len(r.segs) == 0 {
		return r.data
	}
	j := r.joined[:0]
	for _, seg := range r.segs {
		j = append(j, seg...)
	}
	j = append(j, r.data...)
	r.joined = j
	r.releaseSegs()
	return j
}

// endField applies a complete event, id or retry value.
func (r *Reader) endField() {
	switch r.field {
	case fieldEvent:
		r.typ = append(r.typ[:0], r.value...)
	case fieldID:
		// The standard ignores an id containing NUL.
		if bytes.IndexByte(r.value, 0) < 0 {
			r.idBuf = append(r.idBuf[:0], r.value...)
		}
	case fieldRetry:
		if d, ok := parseRetry(r.value); ok {
			r.retry, r.hasRetry = d, true
		}
	}
}

// dataOverflow reports data that would grow past the limit with extra,
// keeping the head of what the data would have been.
func (r *Reader) dataOverflow(extra []byte) error {
	want := min(HeadBytes, r.limit+1)
	head := make([]byte, 0, want)
	first := r.data
	if len(r.segs) > 0 {
		first = r.segs[0] // HeadBytes is less than a segment
	}
	head = append(head, first[:min(len(first), want)]...)
	head = append(head, extra[:min(len(extra), want-len(head))]...)
	return r.overflow(&TooLargeError{Field: "data", Limit: r.limit, Head: head})
}

// overflow drops the current event: everything up to its blank line is
// skipped, its id and retry fields included.
func (r *Reader) overflow(err *TooLargeError) error {
	r.skipping = true
	r.state = skipLine
	r.field = fieldIgnore
	r.data, r.hasData = r.data[:0], false
	r.releaseSegs()
	r.typ = r.typ[:0]
	return err
}

// dispatch ends an event at a blank line.
func (r *Reader) dispatch() (Event, bool) {
	if r.skipping {
		r.skipping = false
		return Event{}, false
	}
	if string(r.idBuf) != r.lastID {
		r.lastID = string(r.idBuf)
	}
	if !r.hasData {
		r.typ = r.typ[:0]
		return Event{}, false
	}
	ev := Event{Type: typeName(r.typ), Data: r.eventData(), ID: r.lastID}
	r.hasData = false
	r.typ = r.typ[:0]
	return ev, true
}

// typeName avoids an allocation for the types MCP uses.
func typeName(b []byte) string {
	switch string(b) {
	case "", "message":
		return "message"
	case "endpoint":
		return "endpoint"
	}
	return string(b)
}

// parseRetry reads a retry value: ASCII digits only, in milliseconds.
// Values too large for a time.Duration are ignored like malformed ones.
func parseRetry(v []byte) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	const maxMS = math.MaxInt64 / int64(time.Millisecond)
	var ms int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		if ms > (maxMS-int64(c-'0'))/10 {
			return 0, false
		}
		ms = ms*10 + int64(c-'0')
	}
	return time.Duration(ms) * time.Millisecond, true
}
