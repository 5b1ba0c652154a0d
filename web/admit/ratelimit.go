package admit

import (
	"context"
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
//
// In a workshop room the share belongs to the seat, not the address: a
// class behind one NAT is one address and many learners. The web layer,
// having checked a request's seat cookie against the room, names the seat
// (WithSeat); its client is then the seat at that address (ClientKey), with
// a bucket of its own. So that seats cannot mint shares, every request of
// an address also takes from the address's ceiling: a bucket of one share
// for the address itself plus one per seat seen from it (or reported joined
// from it, SeatsJoined), at most Share.SeatsPerAddress. An address with no
// seat is one share, as before.
const (
	RateLimitPerSecond = 2.0  // tokens added per second
	RateLimitBurst     = 20.0 // the bucket's size: clicks in a quick burst
	// SeatsPerAddress bounds the seats whose shares one address's ceiling
	// counts: a class of 60 behind one NAT, with room to spare.
	SeatsPerAddress = 100
	// rateLimitMaxClients bounds the buckets kept; full buckets are
	// forgotten first (a forgotten client starts full, which is the same).
	rateLimitMaxClients = 100_000
	// seatMemory is how long a seat seen from an address counts for its
	// ceiling: a workshop day.
	seatMemory = 12 * time.Hour
)

// Share is one client's fair share of the routes that run SQL.
type Share struct {
	PerSecond float64 // tokens a client gains per second
	Burst     float64 // the most tokens a client holds: clicks in a quick burst
	// SeatsPerAddress is the most seats one address's ceiling grows by.
	SeatsPerAddress int
}

// DefaultShare is the share a server gives without flags.
func DefaultShare() Share {
	return Share{PerSecond: RateLimitPerSecond, Burst: RateLimitBurst, SeatsPerAddress: SeatsPerAddress}
}

// ceiling is the address's share multiplier with seats seen from it.
func (s Share) ceiling(seats int) float64 {
	return float64(1 + min(max(seats, 0), s.SeatsPerAddress))
}

type RateLimiter struct {
	mu              sync.Mutex
	PerSecond       float64
	Burst           float64
	SeatsPerAddress int
	trustProxy      bool
	buckets         map[string]*bucket
	seats           map[string]*addressSeats // by address
	Now             func() time.Time         // a field so that tests can move time
	// Seats, if not nil, finds the seat of a request whose context names
	// none (WithSeat): the web layer's check of a seat's token, cached.
	Seats *SeatCache
}

type bucket struct {
	tokens float64
	at     time.Time
	scale  float64 // the bucket's rate and size in shares: 1, or an address's ceiling
}

// addressSeats are the seats seen from one address, and the count the web
// layer reported joined from it.
type addressSeats struct {
	seen   map[string]time.Time
	joined int
}

func (a *addressSeats) count(now time.Time) int {
	n := 0
	for _, at := range a.seen {
		if now.Sub(at) < seatMemory {
			n++
		}
	}
	return max(n, a.joined)
}

// NewRateLimiter is a limiter of perSecond tokens a second and burst at
// most per client, whose addresses gain no share from seats.
func NewRateLimiter(perSecond, burst float64, trustProxy bool) *RateLimiter {
	return NewShareLimiter(Share{PerSecond: perSecond, Burst: burst, SeatsPerAddress: -1}, trustProxy)
}

// NewShareLimiter is the server's limiter: share per client, and per
// address one share more for each seat seen from it (up to
// share.SeatsPerAddress). A zero field is the default's (DefaultShare); a
// negative SeatsPerAddress counts no seats.
func NewShareLimiter(share Share, trustProxy bool) *RateLimiter {
	if share.PerSecond <= 0 {
		share.PerSecond = RateLimitPerSecond
	}
	if share.Burst <= 0 {
		share.Burst = RateLimitBurst
	}
	if share.SeatsPerAddress == 0 {
		share.SeatsPerAddress = SeatsPerAddress
	}
	return &RateLimiter{PerSecond: share.PerSecond, Burst: share.Burst, SeatsPerAddress: max(share.SeatsPerAddress, 0),
		trustProxy: trustProxy, buckets: map[string]*bucket{}, seats: map[string]*addressSeats{}, Now: time.Now}
}

func (l *RateLimiter) share() Share {
	return Share{PerSecond: l.PerSecond, Burst: l.Burst, SeatsPerAddress: l.SeatsPerAddress}
}

// seatKey carries, in a request's context, the seat the web layer checked.
type seatKey struct{}

// WithSeat is ctx saying its request comes from seat (a workshop learner's
// id, checked against the room by the caller: an unchecked cookie would
// let anyone mint shares).
func WithSeat(ctx context.Context, seat string) context.Context {
	return context.WithValue(ctx, seatKey{}, seat)
}

// seatSep separates the address from the seat in a client key: no address
// holds it.
const seatSep = "#"

// ClientKey names the client seat at address ("" seat: the address).
func ClientKey(address, seat string) string {
	if seat == "" {
		return address
	}
	return address + seatSep + seat
}

// splitClient is ClientKey's inverse.
func splitClient(client string) (address, seat string) {
	address, seat, _ = strings.Cut(client, seatSep)
	return address, seat
}

// ClientOf names the client of a request: its remote host, or with
// trustProxy the last address of X-Forwarded-For; and the seat at that
// address when the request's context carries one (WithSeat), or Seats
// finds one.
func (l *RateLimiter) ClientOf(r *http.Request) string {
	seat, named := r.Context().Value(seatKey{}).(string)
	if !named && l.Seats != nil {
		seat = l.Seats.SeatOf(r)
	}
	return ClientKey(l.AddressOf(r), seat)
}

// AddressOf is the remote host of a request, or with trustProxy the last
// address of X-Forwarded-For.
func (l *RateLimiter) AddressOf(r *http.Request) string {
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

// SeatsJoined tells the limiter that n seats joined from address (the
// workshop's own count): its ceiling counts at least n seats.
func (l *RateLimiter) SeatsJoined(address string, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.addressSeats(address, l.Now()).joined = n
}

// SeatsCounted is how many seats address's ceiling counts now.
func (l *RateLimiter) SeatsCounted(address string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return min(l.seatsAt(address, l.Now()), max(l.SeatsPerAddress, 0))
}

// addressSeats is address's record, made when missing.
func (l *RateLimiter) addressSeats(address string, now time.Time) *addressSeats {
	a := l.seats[address]
	if a == nil {
		if len(l.seats) >= rateLimitMaxClients {
			l.forgetSeats(now)
		}
		a = &addressSeats{seen: map[string]time.Time{}}
		l.seats[address] = a
	}
	return a
}

// seatSeen counts seat for address's ceiling and returns the seats counted.
// An address's record keeps at most SeatsPerAddress seats: more would not
// raise its ceiling.
func (l *RateLimiter) seatSeen(address, seat string, now time.Time) int {
	if l.SeatsPerAddress == 0 {
		return 0
	}
	a := l.addressSeats(address, now)
	if _, ok := a.seen[seat]; ok || len(a.seen) < l.SeatsPerAddress {
		a.seen[seat] = now
	} else {
		for s, at := range a.seen {
			if now.Sub(at) >= seatMemory {
				delete(a.seen, s)
			}
		}
		if len(a.seen) < l.SeatsPerAddress {
			a.seen[seat] = now
		}
	}
	return a.count(now)
}

// seatsAt is the seats counted for address's ceiling.
func (l *RateLimiter) seatsAt(address string, now time.Time) int {
	if a := l.seats[address]; a != nil {
		return a.count(now)
	}
	return 0
}

// Take removes n tokens from client's bucket if it has at least one (and,
// for a seat, from its address's ceiling too); it reports whether the
// request may go on and, if not, in how many whole seconds a token will be
// there. A bucket may go below zero: the cost of a long run is paid
// afterwards.
func (l *RateLimiter) Take(client string, n float64) (ok bool, retryAfter int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.Now()
	own, ceiling := l.bucketsOf(client, now)
	retry := own.retry(l.PerSecond)
	if ceiling != nil {
		retry = max(retry, ceiling.retry(l.PerSecond))
	}
	if retry > 0 {
		return false, retry
	}
	own.tokens -= n
	if ceiling != nil {
		ceiling.tokens -= n
	}
	return true, 0
}

// Charge takes n more tokens after the fact (a run that cost more).
func (l *RateLimiter) Charge(client string, n float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	address, _ := splitClient(client)
	if b := l.buckets[client]; b != nil {
		b.tokens -= n
	}
	if b := l.buckets[ceilingKey(address)]; b != nil {
		b.tokens -= n
	}
}

// ceilingKey names an address's ceiling among the buckets.
func ceilingKey(address string) string { return seatSep + address }

// bucketsOf is client's own bucket, refilled to now, and its address's
// ceiling when the address has seats (nil otherwise: the address's own
// bucket is the client's).
func (l *RateLimiter) bucketsOf(client string, now time.Time) (own, ceiling *bucket) {
	address, seat := splitClient(client)
	seats := 0
	if seat != "" {
		seats = l.seatSeen(address, seat, now)
	} else {
		seats = l.seatsAt(address, now)
	}
	own = l.bucket(client, 1, now)
	if _, seated := l.buckets[ceilingKey(address)]; seat != "" || seats > 0 || seated {
		ceiling = l.bucket(ceilingKey(address), l.share().ceiling(seats), now)
	}
	return own, ceiling
}

// bucket is key's bucket of scale shares, refilled to now.
func (l *RateLimiter) bucket(key string, scale float64, now time.Time) *bucket {
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= rateLimitMaxClients {
			l.forgetFull(now)
		}
		b = &bucket{tokens: l.Burst * scale, at: now, scale: scale}
		l.buckets[key] = b
	}
	if scale > b.scale {
		// A seat more at the address brings its own burst.
		b.tokens += (scale - b.scale) * l.Burst
	}
	b.scale = scale
	b.tokens = min(l.Burst*scale, b.tokens+now.Sub(b.at).Seconds()*l.PerSecond*scale)
	b.at = now
	return b
}

// retry is 0 when b has a token, else the whole seconds until it has one.
func (b *bucket) retry(perSecond float64) int {
	if b.tokens >= 1 {
		return 0
	}
	return max(1, int(math.Ceil((1-b.tokens)/(perSecond*b.scale))))
}

// forgetFull drops the buckets that have refilled: their clients are idle.
func (l *RateLimiter) forgetFull(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.PerSecond*b.scale >= l.Burst*b.scale {
			delete(l.buckets, k)
		}
	}
}

// forgetSeats drops the addresses whose seats were all last seen long ago.
func (l *RateLimiter) forgetSeats(now time.Time) {
	for k, a := range l.seats {
		if a.joined == 0 && a.count(now) == 0 {
			delete(l.seats, k)
		}
	}
}
