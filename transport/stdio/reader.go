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

// lineSink receives what a lineReader splits. Slices are only valid during
// the call; the reader reuses its buffer.
type lineSink interface {
	// line is one complete line of at most the limit, without its '\n'.
	line(b []byte)
	// longHead is the first limit bytes of a line found to be longer; it
	// is called once, as soon as that is known, and longEnd follows.
	longHead(b []byte)
	// longEnd reports that the over-long line has ended and how many
	// bytes it had, excluding the '\n'.
	longEnd(total int64)
}

// lineReader splits a byte stream into '\n'-terminated lines in bounded
// memory. It is independent of pipes and processes so that it can be
// fuzzed and benchmarked on its own.
type lineReader struct {
	src   io.Reader
	limit int
	chunk int
	out   lineSink

	// peak is the largest buffer capacity ever allocated. Tests read it to
	// prove the bound; it changes only when the buffer grows.
	peak atomic.Int64
}

func newLineReader(src io.Reader, limit, chunk int, out lineSink) *lineReader {
	return &lineReader{src: src, limit: limit, chunk: chunk, out: out}
}

// run reads until src fails and returns that error (io.EOF at a clean end).
// At EOF an unterminated last line is delivered like any other; after any
// other error it is dropped, since it is probably cut short.
//
// The buffer never exceeds limit+chunk bytes. While a line fits it grows by
// doubling; once the unterminated tail of the buffer exceeds the limit the
// line is over-long, its head is reported, and every further byte up to the
// next '\n' is counted and thrown away without being kept.
func (r *lineReader) run() error {
	ceiling := r.limit + r.chunk
	buf := make([]byte, min(r.chunk, ceiling))
	r.peak.Store(int64(len(buf)))

	start, end := 0, 0 // buf[start:end] is unconsumed data
	skipping := false  // inside an over-long line
	var skipped int64  // bytes of it seen so far

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
			case nl-start > r.limit:
				r.out.longHead(buf[start : start+r.limit])
				r.out.longEnd(int64(nl - start))
			default:
				r.out.line(buf[start:nl])
			}
			start = nl + 1
			scan = start
		}

		// No '\n' in buf[start:end].
		switch {
		case skipping:
			skipped += int64(end - start)
			start, end = 0, 0
		case end-start > r.limit:
			r.out.longHead(buf[start : start+r.limit])
			skipping = true
			skipped = int64(end - start)
			start, end = 0, 0
		}

		if err != nil {
			if err == io.EOF {
				if skipping {
					r.out.longEnd(skipped)
				} else if end > start {
					r.out.line(buf[start:end])
				}
			}
			return err
		}

		if start == end {
			start, end = 0, 0
		}
		if end == len(buf) {
			if start > 0 {
				// Move the partial line to the front before growing:
				// most of the time that alone makes room.
				end = copy(buf, buf[start:end])
				start = 0
			} else {
				// Full of one partial line that is still within the
				// limit, so len(buf) <= limit < ceiling: room to grow.
				grown := make([]byte, min(2*len(buf), ceiling))
				end = copy(grown, buf[:end])
				buf = grown
				r.peak.Store(int64(len(buf)))
			}
		}
	}
}
