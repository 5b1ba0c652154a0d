package admit

import (
	"container/list"
	"sync"
)

// runCacheBytes bounds the answers the run cache keeps.
const runCacheBytes = 32 << 20

// RunCache keeps recent answers of runs (pages, fragments, JSON) by URL, in
// least-recently-used order, within a budget of bytes. A run is a pure
// function of its URL, so an answer stays right until the course changes
// (admission.invalidate clears the cache).
type RunCache struct {
	mu       sync.Mutex
	MaxBytes int64
	Bytes    int64
	order    *list.List // front: most recently used; values are *runCacheEntry
	byKey    map[string]*list.Element
}

type runCacheEntry struct {
	key string
	out *Output
}

func NewRunCache(maxBytes int64) *RunCache {
	return &RunCache{MaxBytes: maxBytes, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *RunCache) Get(key string) (*Output, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*runCacheEntry).out, true
}

// Put keeps an answer, evicting the least recently used ones to stay within
// maxBytes. An answer larger than a quarter of the cache is not kept.
func (c *RunCache) Put(key string, out *Output) {
	size := out.size()
	if size > c.MaxBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.Bytes -= e.Value.(*runCacheEntry).out.size()
		c.order.Remove(e)
	}
	c.byKey[key] = c.order.PushFront(&runCacheEntry{key: key, out: out})
	c.Bytes += size
	for c.Bytes > c.MaxBytes {
		last := c.order.Back()
		ent := last.Value.(*runCacheEntry)
		c.order.Remove(last)
		delete(c.byKey, ent.key)
		c.Bytes -= ent.out.size()
	}
}

func (c *RunCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Init()
	clear(c.byKey)
	c.Bytes = 0
}

// Len is the number of answers kept.
func (c *RunCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byKey)
}
