package web

import (
	"sync"
	"time"
)

// clientLimiter counts each client's failures in a sliding window and
// refuses the client once it has n of them. The client is named by the
// server's one rule (rateLimiter.clientOf), so -trust-proxy applies here too.
type clientLimiter struct {
	n      int
	window time.Duration
	mu     sync.Mutex
	seen   map[string][]time.Time
}

func newClientLimiter(n int, window time.Duration) *clientLimiter {
	return &clientLimiter{n: n, window: window, seen: make(map[string][]time.Time)}
}

// allow says whether the client is under its limit, and if not, how many
// seconds until it is.
func (l *clientLimiter) allow(client string, now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	recent := l.recent(client, now)
	if len(recent) >= l.n {
		return false, int((l.window-now.Sub(recent[0]))/time.Second) + 1
	}
	return true, 0
}

// fail counts one failure of the client.
func (l *clientLimiter) fail(client string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.seen) > 10000 { // forget everyone rather than grow without bound
		clear(l.seen)
	}
	l.seen[client] = append(l.recent(client, now), now)
}

func (l *clientLimiter) recent(client string, now time.Time) []time.Time {
	recent := l.seen[client][:0]
	for _, t := range l.seen[client] {
		if now.Sub(t) < l.window {
			recent = append(recent, t)
		}
	}
	l.seen[client] = recent
	return recent
}
