package admit

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// Seats: a request's seat for its fair share (ratelimit.go). The web layer
// knows where a seat's token travels (a cookie, a resume link) and how to
// check it (the workshop store); admit asks it only for requests that are
// charged (ClientOf), and keeps what it learnt for a while, so that a click
// costs no store read and a made-up token costs one read a minute.
const (
	seatCacheTTL     = time.Minute
	seatCacheEntries = 100_000
)

// SeatLookup checks a seat's token: the seat's id when the token belongs
// to a seat of an open room, ok false otherwise (or on a store error: the
// request is then charged to its address, as any other).
type SeatLookup func(ctx context.Context, token string) (seat string, ok bool)

// SeatCache finds requests' seats through Token and Lookup, remembering
// each answer for a minute.
type SeatCache struct {
	Token  func(r *http.Request) string // the request's seat token, or ""
	Lookup SeatLookup
	Now    func() time.Time

	mu      sync.Mutex
	entries map[string]seatEntry
}

type seatEntry struct {
	seat string // "" when the token is no seat's
	at   time.Time
}

// NewSeatCache finds seats with token and lookup.
func NewSeatCache(token func(*http.Request) string, lookup SeatLookup) *SeatCache {
	return &SeatCache{Token: token, Lookup: lookup, Now: time.Now, entries: map[string]seatEntry{}}
}

// SeatOf is r's seat, or "".
func (c *SeatCache) SeatOf(r *http.Request) string {
	token := c.Token(r)
	if token == "" {
		return ""
	}
	now := c.Now()
	c.mu.Lock()
	e, ok := c.entries[token]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < seatCacheTTL {
		return e.seat
	}
	seat, found := c.Lookup(r.Context(), token)
	if !found {
		seat = ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= seatCacheEntries {
		for k, e := range c.entries {
			if now.Sub(e.at) >= seatCacheTTL {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= seatCacheEntries {
			clear(c.entries) // all fresh: start again rather than grow
		}
	}
	c.entries[token] = seatEntry{seat: seat, at: now}
	return seat
}

// Forget drops what the cache knows of seat (a learner removed from their
// room): the next request with its token is looked up again.
func (c *SeatCache) Forget(seat string) {
	if seat == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for token, e := range c.entries {
		if e.seat == seat {
			delete(c.entries, token)
		}
	}
}
