package web

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// clientLimiter counts each client's (by IP address) failures in a sliding
// window and refuses the client once it has n of them.
type clientLimiter struct {
	n      int
	window time.Duration
	mu     sync.Mutex
	seen   map[string][]time.Time
}

func newClientLimiter(n int, window time.Duration) *clientLimiter {
	return &clientLimiter{n: n, window: window, seen: make(map[string][]time.Time)}
}

func clientOf(r *http.Request) string {
	client, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return client
}

// allow says whether the client is under its limit, and if not, how many
// seconds until it is.
func (l *clientLimiter) allow(r *http.Request, now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	recent := l.recent(clientOf(r), now)
	if len(recent) >= l.n {
		return false, int((l.window-now.Sub(recent[0]))/time.Second) + 1
	}
	return true, 0
}

// fail counts one failure of the client.
func (l *clientLimiter) fail(r *http.Request, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.seen) > 10000 { // forget everyone rather than grow without bound
		clear(l.seen)
	}
	client := clientOf(r)
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
