package admit

import (
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Fair share: each client has a token bucket for the routes that run SQL.
// A request takes one token; a run that held a slot long takes more
// afterwards (admissionCostUnit). A client with no token left is refused
// with 429 and Retry-After, so one client cannot starve the rest.
//
// The client is the remote address. Behind a reverse proxy every request
// comes from the proxy, so with TrustProxy the client is the last address
// of X-Forwarded-For (the one the proxy itself appended); without it the
// header is ignored, since anyone can send it.
const (
	RateLimitPerSecond = 2.0  // tokens added per second
	RateLimitBurst     = 20.0 // the bucket's size: clicks in a quick burst
	// rateLimitMaxClients bounds the buckets kept; full buckets are
	// forgotten first (a forgotten client starts full, which is the same).
	rateLimitMaxClients = 100_000
)

type RateLimiter struct {
	mu         sync.Mutex
	PerSecond  float64
	Burst      float64
	trustProxy bool
	buckets    map[string]*bucket
	Now        func() time.Time // a field so that tests can move time
}

type bucket struct {
	tokens float64
	at     time.Time
}

func NewRateLimiter(perSecond, burst float64, trustProxy bool) *RateLimiter {
	return &RateLimiter{PerSecond: perSecond, Burst: burst, trustProxy: trustProxy, buckets: map[string]*bucket{}, Now: time.Now}
}

// ClientOf names the client of a request: its remote host, or with
// trustProxy the last address of X-Forwarded-For.
func (l *RateLimiter) ClientOf(r *http.Request) string {
	if l.trustProxy {
		if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
			last := xff[len(xff)-1]
			if i := strings.LastIndexByte(last, ','); i >= 0 {
				last = last[i+1:]
			}
			if ip := net.ParseIP(strings.TrimSpace(last)); ip != nil {
				return ip.String()
			}
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// Take removes n tokens from client's bucket if it has at least one; it
// reports whether the request may go on and, if not, in how many whole
// seconds a token will be there. A bucket may go below zero: the cost of a
// long run is paid afterwards.
func (l *RateLimiter) Take(client string, n float64) (ok bool, retryAfter int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.Now()
	b := l.buckets[client]
	if b == nil {
		if len(l.buckets) >= rateLimitMaxClients {
			l.forgetFull(now)
		}
		b = &bucket{tokens: l.Burst, at: now}
		l.buckets[client] = b
	}
	b.tokens = min(l.Burst, b.tokens+now.Sub(b.at).Seconds()*l.PerSecond)
	b.at = now
	if b.tokens < 1 {
		return false, int(math.Ceil((1 - b.tokens) / l.PerSecond))
	}
	b.tokens -= n
	return true, 0
}

// Charge takes n more tokens after the fact (a run that cost more).
func (l *RateLimiter) Charge(client string, n float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b := l.buckets[client]; b != nil {
		b.tokens -= n
	}
}

// forgetFull drops the buckets that have refilled: their clients are idle.
func (l *RateLimiter) forgetFull(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.PerSecond >= l.Burst {
			delete(l.buckets, k)
		}
	}
}
