package gctune

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// With GOGC=400 a busy server leaves up to four times its live heap of
// garbage, which a server that then goes quiet would keep: nothing
// allocates, so nothing collects. FreeWhenIdle gives it back: once a tick
// passes with almost no allocation after a busy spell, it collects and
// returns the freed memory to the system (debug.FreeOSMemory), once per
// busy spell.
const (
	idleTick  = time.Second
	idleBytes = 1 << 20  // allocated in a tick that counts as idle
	busyBytes = 16 << 20 // allocated since the last collection that makes one worth it
)

// FreeWhenIdle runs until ctx ends.
func FreeWhenIdle(ctx context.Context) {
	t := time.NewTicker(idleTick)
	defer t.Stop()
	w := idleWatch{free: debug.FreeOSMemory}
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			metrics.Read(sample)
			w.tick(sample[0].Value.Uint64())
		}
	}
}

// idleWatch decides, from the bytes allocated so far at each tick, when to
// free.
type idleWatch struct {
	started bool
	last    uint64 // allocated bytes at the last tick
	freed   uint64 // allocated bytes at the last free
	free    func()
}

func (w *idleWatch) tick(allocated uint64) {
	if !w.started {
		w.started, w.last, w.freed = true, allocated, allocated
		return
	}
	quiet := allocated-w.last < idleBytes
	w.last = allocated
	if quiet && allocated-w.freed >= busyBytes {
		w.free()
		w.freed = allocated
	}
}
