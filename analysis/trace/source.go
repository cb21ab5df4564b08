package trace

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync/atomic"

	// klauspost's gzip reads the same streams as compress/gzip's, in
	// about half the CPU: decompression is a third of the parse of a
	// .json.gz trace.
	"github.com/klauspost/compress/gzip"
)

// The input side of the importer: one goroutine reads the file, hashes the
// bytes as stored, un-gzips them when the stream starts with the gzip magic,
// and hands the JSON to the parser in fixed-size chunks over a channel, so
// that reading and decompression overlap with parsing.

// chunkSize is the bytes per chunk handed to the parser; a variable so
// tests can make chunks tiny.
var chunkSize = 256 << 10

const (
	chunksAhead = 6               // chunks the reader may run ahead of the parser
	poolChunks  = chunksAhead + 2 // chunks in flight: queued, being filled, being consumed
)

// chunk is one piece of the uncompressed stream, or its end.
type chunk struct {
	b   []byte
	err error // io.EOF at the end of the stream, or what went wrong
	sum string
}

// source is the parser's end of the reader goroutine.
type source struct {
	ch       chan chunk
	free     chan []byte
	done     chan struct{}
	cur      []byte // rest of the chunk being consumed
	curFull  []byte // the whole chunk, to recycle
	diskRead atomic.Int64
	produced atomic.Int64 // uncompressed bytes produced
	sum      string
	size     int // bytes per chunk, read from chunkSize when the source starts
	finished bool
	pending  error // an error that arrived after some bytes were returned
}

// countingReader counts the bytes read from disk and hashes them.
type countingReader struct {
	r io.Reader
	h hash.Hash
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.h.Write(p[:n])
		c.n.Add(int64(n))
	}
	return n, err
}

// startSource starts the reader goroutine over r.
func startSource(r io.Reader) *source {
	s := &source{
		ch:   make(chan chunk, chunksAhead),
		free: make(chan []byte, poolChunks),
		done: make(chan struct{}),
		size: chunkSize,
	}
	go s.produce(r)
	return s
}

// stop tells the reader goroutine to end; it is safe to call more than once.
func (s *source) stop() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
}

func (s *source) send(c chunk) bool {
	select {
	case s.ch <- c:
		return true
	case <-s.done:
		return false
	}
}

func (s *source) produce(r io.Reader) {
	cr := &countingReader{r: r, h: sha256.New(), n: &s.diskRead}
	br := bufio.NewReaderSize(cr, 64<<10)
	var in io.Reader = br
	gz := false
	allocated := 0
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			s.send(chunk{err: gzipErr(err)})
			return
		}
		in = zr
		gz = true
	}
	for {
		// A pool of at most poolChunks chunks, allocated as needed: the
		// reader waits for the parser to hand a chunk back rather than
		// allocating (and zeroing) a new one for every read.
		var buf []byte
		select {
		case buf = <-s.free:
		default:
			if allocated < poolChunks {
				allocated++
				buf = make([]byte, s.size)
				break
			}
			select {
			case buf = <-s.free:
			case <-s.done:
				return
			}
		}
		buf = buf[:cap(buf)]
		n, err := fill(in, buf)
		if n > 0 {
			s.produced.Add(int64(n))
			if !s.send(chunk{b: buf[:n]}) {
				return
			}
		}
		if err == io.EOF {
			// Hash whatever follows the end of the data (trailing garbage after a
			// gzip member is read by gzip itself).
			_, rerr := io.Copy(io.Discard, br)
			if rerr != nil {
				s.send(chunk{err: readErr(rerr, false)})
				return
			}
			s.send(chunk{err: io.EOF, sum: hex.EncodeToString(cr.h.Sum(nil))})
			return
		}
		if err != nil {
			s.send(chunk{err: readErr(err, gz)})
			return
		}
	}
}

// fill reads into buf until it is full or the stream ends (io.EOF) or fails.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
		if m == 0 {
			// A reader that returns 0, nil repeatedly: try again; io.Reader
			// implementations are discouraged from it but it is legal.
			continue
		}
	}
	return n, nil
}

func gzipErr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: %v", ErrTruncatedGzip, err)
	}
	return fmt.Errorf("%w: %v", ErrBadGzip, err)
}

func readErr(err error, gz bool) error {
	if gz {
		return gzipErr(err)
	}
	return fmt.Errorf("%w: %v", ErrUnreadable, err)
}

// read fills dst (waiting for the reader goroutine as needed, so that an
// event cut by the end of the buffer is parsed again at most once per
// buffer's worth of input); short only at the end of the stream or on an
// error, io.EOF when nothing is left.
func (s *source) read(dst []byte) (int, error) {
	if s.pending != nil {
		return 0, s.pending
	}
	n := 0
	for n < len(dst) {
		if len(s.cur) == 0 {
			if s.curFull != nil {
				s.free <- s.curFull // never blocks: the pool is the channel's capacity
				s.curFull = nil
			}
			if s.finished {
				if n > 0 {
					return n, nil
				}
				return 0, io.EOF
			}
			c := <-s.ch
			if c.err != nil {
				if c.err == io.EOF {
					s.finished = true
					s.sum = c.sum
					continue
				}
				if n > 0 {
					s.pending = c.err
					return n, nil
				}
				return 0, c.err
			}
			s.cur, s.curFull = c.b, c.b
		}
		m := copy(dst[n:], s.cur)
		n += m
		s.cur = s.cur[m:]
	}
	return n, nil
}
