package stdio

import (
	"bytes"
	"io"
	"sync/atomic"
)

// readChunk is both the initial buffer size and the slack the buffer may
// grow past its limit: one read's worth, so a line of exactly the limit can
// be told apart from a longer one without a second pass.
const readChunk = 64 << 10

// maxRetainedLineBytes caps what the reader keeps between lines for the
// next large one (free segments and the join buffer, each): a session of
// 200 KiB results then allocates nothing per line, and one huge line does
// not pin its size for the session.
const maxRetainedLineBytes = 1 << 20

// lineSink receives what a lineReader splits. Slices are only valid during
// the call; the reader reuses its buffer.
type lineSink interface {
	// line is one complete line of at most the limit, without its '\n'.
	line(b []byte)
	// longHead is the first min(limit, chunk) bytes of a line found to be
	// longer than the limit (enough to read a JSON-RPC id from); it is
	// called once, as soon as that is known, and longEnd follows.
	longHead(b []byte)
	// longEnd reports that the over-long line has ended and how many
	// bytes it had, excluding the '\n'.
	longEnd(total int64)
}

// tailSink is a lineSink that tells the unterminated last line at EOF
// from a complete one: on stdout such a line may be a message its server
// died writing. Sinks without it get the tail through line.
type tailSink interface {
	tail(b []byte)
}

// lineReader splits a byte stream into '\n'-terminated lines in bounded
// memory. It is independent of pipes and processes so that it can be
// fuzzed and benchmarked on its own.
type lineReader struct {
	src   io.Reader
	limit int
	chunk int
	out   lineSink

	// peak is the most line data ever held (segments plus the read
	// buffer). Tests read it to prove the bound.
	peak atomic.Int64
}

func newLineReader(src io.Reader, limit, chunk int, out lineSink) *lineReader {
	return &lineReader{src: src, limit: limit, chunk: chunk, out: out}
}

// run reads until src fails and returns that error (io.EOF at a clean end).
// At EOF an unterminated last line is delivered like any other (through
// tail when out is a tailSink); after any other error it is dropped, since
// it is probably cut short.
//
// Memory: reads go into one buffer of chunk bytes. A line that fits in it
// is handed over in place (the hot path: no allocation). A line that
// fills it is kept as a list of full chunk-sized segments, never copied
// while it grows; when it ends within the limit it is joined once. Once
// the line passes the limit its segments are released and every further
// byte up to the next '\n' is counted and thrown away. So skipping an
// over-long line allocates about limit+chunk bytes in all, where growing
// one buffer by doubling cost three times the limit.
func (r *lineReader) run() error {
	buf := make([]byte, r.chunk)
	r.peak.Store(int64(len(buf)))

	var spill [][]byte // full segments of the current line, before buf
	spillLen := 0      // their total size
	var free [][]byte  // segments kept for reuse
	var joined []byte  // reused join buffer
	release := func() {
		for _, seg := range spill {
			if (len(free)+1)*r.chunk <= maxRetainedLineBytes {
				free = append(free, seg)
			}
		}
		spill, spillLen = nil, 0
	}
	join := func(last []byte) []byte {
		joined = joined[:0]
		for _, seg := range spill {
			joined = append(joined, seg...)
		}
		joined = append(joined, last...)
		line := joined
		if cap(joined) > maxRetainedLineBytes {
			joined = nil
		}
		return line
	}
	start, end := 0, 0 // buf[start:end] is unconsumed data
	skipping := false  // inside an over-long line
	var skipped int64  // bytes of it seen so far

	// head is the start of the current line, for longHead.
	head := func(lineEnd int) []byte {
		n := min(r.limit, r.chunk)
		if len(spill) > 0 {
			return spill[0][:n]
		}
		return buf[start : start+min(n, lineEnd-start)]
	}

	for {
		n, err := r.src.Read(buf[end:])
		scan := end
		end += n

		for {
			i := bytes.IndexByte(buf[scan:end], '\n')
			if i < 0 {
				break
			}
			nl := scan + i
			switch {
			case skipping:
				skipped += int64(nl - start)
				r.out.longEnd(skipped)
				skipping = false
			case spillLen+nl-start > r.limit:
				r.out.longHead(head(nl))
				r.out.longEnd(int64(spillLen + nl - start))
			case len(spill) > 0:
				r.out.line(join(buf[start:nl]))
			default:
				r.out.line(buf[start:nl])
			}
			release()
			start = nl + 1
			scan = start
		}

		// No '\n' in buf[start:end].
		switch {
		case skipping:
			skipped += int64(end - start)
			start, end = 0, 0
		case spillLen+end-start > r.limit:
			r.out.longHead(head(end))
			skipping = true
			skipped = int64(spillLen + end - start)
			release()
			start, end = 0, 0
		}

		if err != nil {
			if err == io.EOF {
				switch {
				case skipping:
					r.out.longEnd(skipped)
				case len(spill) > 0:
					r.lastLine(join(buf[start:end]))
				case end > start:
					r.lastLine(buf[start:end])
				}
			}
			return err
		}

		if start == end && len(spill) == 0 {
			start, end = 0, 0
		}
		if end == len(buf) {
			if start > 0 {
				// Move the partial line to the front: most of the time
				// that alone makes room.
				end = copy(buf, buf[start:end])
				start = 0
			} else {
				// Full of one partial line still within the limit: it
				// becomes a segment and reading goes on in a new buffer.
				spill = append(spill, buf)
				spillLen += len(buf)
				if n := len(free); n > 0 {
					buf, free = free[n-1], free[:n-1]
				} else {
					buf = make([]byte, r.chunk)
				}
				start, end = 0, 0
				if held := int64(spillLen + len(buf)); held > r.peak.Load() {
					r.peak.Store(held)
				}
			}
		}
	}
}

// lastLine delivers the unterminated line found at EOF.
func (r *lineReader) lastLine(b []byte) {
	if t, ok := r.out.(tailSink); ok {
		t.tail(b)
		return
	}
	r.out.line(b)
}
