package site

import (
	"bytes"
	"errors"
	"runtime"
)

// freeList keeps up to a fixed number of idle things for reuse. Unlike a
// sync.Pool it is not emptied by every garbage collection, and it never
// holds more than its bound.
type freeList[T any] struct{ idle chan T }

func NewFreeList[T any](kept int) freeList[T] { return freeList[T]{idle: make(chan T, kept)} }

// Get returns an idle thing, or false when none is kept.
func (l freeList[T]) Get() (T, bool) {
	select {
	case x := <-l.idle:
		return x, true
	default:
		var zero T
		return zero, false
	}
}

// Put keeps x for reuse, unless the list is full.
func (l freeList[T]) Put(x T) {
	select {
	case l.idle <- x:
	default:
	}
}

// MaxKeptBuffer is the largest buffer (to render an answer into, or
// compress it into) kept for reuse: a click's fragment is tens of KB and a
// page about 100 KB; a rare answer near renderCap (3 MB) is not worth
// holding memory for.
const MaxKeptBuffer = 256 << 10

// RenderBuffers keeps the buffers answers are rendered into, one per run
// that may compute at once: an answer is compressed (or copied) out of its
// buffer into the payload it is sent and cached as, and the buffer is
// reused, so a click allocates no buffer of tens of KB that the garbage
// collector then has to clear and sweep.
var RenderBuffers = RenderBufferList{NewFreeList[*CappedBuffer](4 * runtime.GOMAXPROCS(0))}

// RenderBufferList is a free list of render buffers.
type RenderBufferList struct{ freeList[*CappedBuffer] }

// Take returns an empty buffer refusing to grow past max bytes; give it
// back with release once nothing refers to its bytes.
func (l RenderBufferList) Take(max int) *CappedBuffer {
	b, ok := l.Get()
	if !ok {
		b = &CappedBuffer{}
		b.Grow(32 << 10) // about a click's fragment
	}
	b.Reset()
	b.Max = max
	return b
}

// Release gives b back for reuse, unless it grew past maxKeptBuffer.
func (l RenderBufferList) Release(b *CappedBuffer) {
	if b.Cap() <= MaxKeptBuffer {
		l.Put(b)
	}
}

// CappedBuffer is a buffer that refuses to grow past max bytes.
type CappedBuffer struct {
	bytes.Buffer
	Max int
}

// errRenderCap: the rendered answer would be larger than renderCap.
var ErrRenderCap = errors.New("the rendered answer is over its size cap")

func (b *CappedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.Max {
		return 0, ErrRenderCap
	}
	return b.Buffer.Write(p)
}
