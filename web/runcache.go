package web

import (
	"container/list"
	"sync"
)

// runCacheBytes bounds the answers the run cache keeps.
const runCacheBytes = 32 << 20

// runCache keeps recent answers of runs (pages, fragments, JSON) by URL, in
// least-recently-used order, within a budget of bytes. A run is a pure
// function of its URL, so an answer stays right until the course changes
// (admission.invalidate clears the cache).
type runCache struct {
	mu       sync.Mutex
	maxBytes int64
	bytes    int64
	order    *list.List // front: most recently used; values are *runCacheEntry
	byKey    map[string]*list.Element
}

type runCacheEntry struct {
	key string
	out *runOutput
}

func newRunCache(maxBytes int64) *runCache {
	return &runCache{maxBytes: maxBytes, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *runCache) get(key string) (*runOutput, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*runCacheEntry).out, true
}

// put keeps an answer, evicting the least recently used ones to stay within
// maxBytes. An answer larger than a quarter of the cache is not kept.
func (c *runCache) put(key string, out *runOutput) {
	size := out.size()
	if size > c.maxBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.bytes -= e.Value.(*runCacheEntry).out.size()
		c.order.Remove(e)
	}
	c.byKey[key] = c.order.PushFront(&runCacheEntry{key: key, out: out})
	c.bytes += size
	for c.bytes > c.maxBytes {
		last := c.order.Back()
		ent := last.Value.(*runCacheEntry)
		c.order.Remove(last)
		delete(c.byKey, ent.key)
		c.bytes -= ent.out.size()
	}
}

func (c *runCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Init()
	clear(c.byKey)
	c.bytes = 0
}

// len is the number of answers kept.
func (c *runCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byKey)
}
