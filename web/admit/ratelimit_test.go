package admit

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// frozenLimiter is a limiter of share whose clock stands still until the
// test moves it.
func frozenLimiter(share Share) (*RateLimiter, *time.Time) {
	l := NewShareLimiter(share, false)
	now := time.Unix(1_700_000_000, 0)
	l.Now = func() time.Time { return now }
	return l, &now
}

// takeAll takes one token for client until refused, at most max times, and
// returns how many were granted.
func takeAll(l *RateLimiter, client string, most int) int {
	for i := range most {
		if ok, _ := l.Take(client, 1); !ok {
			return i
		}
	}
	return most
}

func TestShare_Ceiling(t *testing.T) {
	share := Share{PerSecond: 2, Burst: 20, SeatsPerAddress: 100}
	for _, tc := range []struct {
		seats int
		want  float64
	}{
		{0, 1}, {1, 2}, {30, 31}, {60, 61}, {100, 101}, {101, 101}, {100_000, 101}, {-3, 1},
	} {
		if got := share.ceiling(tc.seats); got != tc.want {
			t.Errorf("ceiling with %d seats: %v shares; want %v", tc.seats, got, tc.want)
		}
	}
	if got := (Share{PerSecond: 2, Burst: 20, SeatsPerAddress: 0}).ceiling(60); got != 1 {
		t.Errorf("with no seats counted per address, 60 seats make %v shares; want 1", got)
	}
}

// The burst each client gets at once, from a standing start, for classes
// of every size behind one address: every seat gets its own burst as long
// as the address's ceiling (one share per seat, plus one) has room, and
// the ceiling stops at SeatsPerAddress.
func TestRateLimiter_SeatsBehindOneAddressEachGetAShare(t *testing.T) {
	for _, tc := range []struct {
		name            string
		seats           int
		seatsPerAddress int
		wantEach        int // the burst each seat gets, in order
		wantLast        int // the last seat's, when the ceiling runs out
		wantAnonymous   int // then a request with no seat from the address
	}{
		{name: "OneSeat", seats: 1, seatsPerAddress: 100, wantEach: 20, wantLast: 20, wantAnonymous: 20},
		{name: "ThirtySeats", seats: 30, seatsPerAddress: 100, wantEach: 20, wantLast: 20, wantAnonymous: 20},
		{name: "SixtySeats", seats: 60, seatsPerAddress: 100, wantEach: 20, wantLast: 20, wantAnonymous: 20},
		// Past the bound the ceiling holds: 5 seats, 3 counted, so 4
		// shares (80 tokens) among them; the 5th seat gets none.
		{name: "PastTheBound", seats: 5, seatsPerAddress: 3, wantEach: 20, wantLast: 0, wantAnonymous: 0},
		{name: "NoSeatsCounted", seats: 2, seatsPerAddress: -1, wantEach: 20, wantLast: 0, wantAnonymous: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := frozenLimiter(Share{PerSecond: 2, Burst: 20, SeatsPerAddress: tc.seatsPerAddress})
			// Every seat is seen first (a page load with no run), as a
			// class arrives.
			for i := range tc.seats {
				l.mu.Lock()
				l.seatSeen("203.0.113.5", fmt.Sprint("seat", i), l.Now())
				l.mu.Unlock()
			}
			for i := range tc.seats {
				want := tc.wantEach
				if i == tc.seats-1 {
					want = tc.wantLast
				}
				if got := takeAll(l, ClientKey("203.0.113.5", fmt.Sprint("seat", i)), 1000); got != want {
					t.Fatalf("seat %d of %d got %d tokens; want %d", i+1, tc.seats, got, want)
				}
			}
			if got := takeAll(l, "203.0.113.5", 1000); got != tc.wantAnonymous {
				t.Errorf("a request with no seat got %d tokens; want %d", got, tc.wantAnonymous)
			}
			if got := takeAll(l, "198.51.100.1", 1000); got != 20 {
				t.Errorf("another address got %d tokens; want its own 20", got)
			}
		})
	}
}

// An attacker who sends made-up seats from one address gains nothing past
// the bound: the ceiling counts at most SeatsPerAddress seats, so a
// thousand seats get what the bound's worth of seats get.
func TestRateLimiter_MadeUpSeatsCannotMintShares(t *testing.T) {
	l, _ := frozenLimiter(Share{PerSecond: 2, Burst: 20, SeatsPerAddress: 10})
	total := 0
	for i := range 1000 {
		total += takeAll(l, ClientKey("192.0.2.66", fmt.Sprint("forged", i)), 1000)
	}
	if want := 11 * 20; total != want {
		t.Errorf("1000 seats from one address got %d tokens in all; want %d (10 seats and the address, 20 each)", total, want)
	}
}

// Refills: each seat refills at the share's rate, the ceiling at the rate
// times its shares; a seat's expensive run (Charge) costs it and its
// address's ceiling.
func TestRateLimiter_SeatRefillsAtTheShareRate(t *testing.T) {
	l, now := frozenLimiter(Share{PerSecond: 2, Burst: 20, SeatsPerAddress: 100})
	a, b := ClientKey("203.0.113.5", "a"), ClientKey("203.0.113.5", "b")
	takeAll(l, a, 1000)
	ok, retry := l.Take(a, 1)
	if ok || retry != 1 {
		t.Fatalf("seat a past its burst: ok %v, retry %d; want refused for 1 s", ok, retry)
	}
	if got := takeAll(l, b, 1000); got != 20 {
		t.Fatalf("seat b got %d tokens while a waited; want its burst of 20", got)
	}
	*now = now.Add(time.Second)
	if got := takeAll(l, a, 1000); got != 2 {
		t.Errorf("a second later seat a got %d tokens; want 2", got)
	}
	l.Charge(a, 6)
	if ok, retry := l.Take(a, 1); ok || retry != 4 {
		t.Errorf("after an expensive run: ok %v, retry %d; want refused for 4 s (6 tokens owed, 2/s)", ok, retry)
	}
}

// The workshop may report the seats joined from an address before they
// are seen: the ceiling counts the larger.
func TestRateLimiter_SeatsJoinedRaiseTheCeiling(t *testing.T) {
	l, _ := frozenLimiter(Share{PerSecond: 2, Burst: 20, SeatsPerAddress: 100})
	l.SeatsJoined("203.0.113.5", 4)
	total := 0
	for i := range 3 {
		total += takeAll(l, ClientKey("203.0.113.5", fmt.Sprint(i)), 1000)
	}
	total += takeAll(l, "203.0.113.5", 1000)
	if total != 80 {
		t.Errorf("3 seats and the address got %d tokens; want 80 (all their bursts, within a ceiling of 5 shares)", total)
	}
}

// A seat's shares outlive neither its memory nor the bound on addresses.
func TestRateLimiter_SeatsAreForgottenAfterADay(t *testing.T) {
	l, now := frozenLimiter(Share{PerSecond: 2, Burst: 20, SeatsPerAddress: 100})
	for i := range 5 {
		l.Take(ClientKey("203.0.113.5", fmt.Sprint(i)), 1)
	}
	if got := l.seatsAt("203.0.113.5", *now); got != 5 {
		t.Fatalf("%d seats counted; want 5", got)
	}
	*now = now.Add(seatMemory)
	if got := l.seatsAt("203.0.113.5", *now); got != 0 {
		t.Errorf("%d seats counted a day later; want 0", got)
	}
}

func TestRateLimiter_ClientNamesTheSeatFromTheContext(t *testing.T) {
	l := NewShareLimiter(DefaultShare(), false)
	r := httptest.NewRequest("GET", "/playground", nil)
	r.RemoteAddr = "198.51.100.7:5123"
	if got := l.ClientOf(r); got != "198.51.100.7" {
		t.Errorf("no seat: client %q; want the address", got)
	}
	r = r.WithContext(WithSeat(context.Background(), "L42"))
	if got := l.ClientOf(r); got != "198.51.100.7#L42" {
		t.Errorf("with a seat: client %q; want the seat at the address", got)
	}
	if a, s := splitClient(l.ClientOf(r)); a != "198.51.100.7" || s != "L42" {
		t.Errorf("split: %q, %q", a, s)
	}
}

func BenchmarkRateLimiter_TakeSeat(b *testing.B) {
	l := NewShareLimiter(Share{PerSecond: 1e12, Burst: 1e12, SeatsPerAddress: 100}, false)
	keys := make([]string, 60)
	for i := range keys {
		keys[i] = ClientKey("203.0.113.5", fmt.Sprint("seat", i))
	}
	for i := 0; b.Loop(); i++ {
		l.Take(keys[i%len(keys)], 1)
	}
}

// Issue 26's classroom, on a simulated clock: learners behind one address,
// each clicking every 2 to 5 s and checking now and then (a check costs 10
// tokens more, a second of CPU) for five minutes. On their seats, fewer
// than 1% of their requests are refused; on the address alone (no seat
// named), most are, as before.
func TestRateLimiter_ClassBehindOneAddress(t *testing.T) {
	for _, tc := range []struct {
		name       string
		learners   int
		seats      bool
		maxRefused float64 // fraction
		minRefused float64
	}{
		{name: "ThirtySeats", learners: 30, seats: true, maxRefused: 0.01},
		{name: "SixtySeats", learners: 60, seats: true, maxRefused: 0.01},
		{name: "ThirtyOnTheAddress", learners: 30, seats: false, minRefused: 0.5, maxRefused: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, now := frozenLimiter(DefaultShare())
			start := *now
			next := make([]time.Time, tc.learners)
			for i := range next {
				next[i] = start.Add(time.Duration(i) * 100 * time.Millisecond)
			}
			requests, refused := 0, 0
			for step := 0; ; step++ {
				// The learner whose click comes first clicks.
				i := 0
				for j := range next {
					if next[j].Before(next[i]) {
						i = j
					}
				}
				if next[i].Sub(start) > 5*time.Minute {
					break
				}
				*now = next[i]
				client := "203.0.113.5"
				if tc.seats {
					client = ClientKey(client, fmt.Sprint("learner", i))
				}
				requests++
				if ok, _ := l.Take(client, 1); !ok {
					refused++
				} else if step%7 == 0 {
					l.Charge(client, 10) // a check: a second of CPU
				}
				next[i] = next[i].Add(2*time.Second + time.Duration(step*7919%3000)*time.Millisecond)
			}
			frac := float64(refused) / float64(requests)
			t.Logf("%d learners: %d of %d requests refused (%.2f%%)", tc.learners, refused, requests, 100*frac)
			if frac > tc.maxRefused || frac < tc.minRefused {
				t.Errorf("%.2f%% refused; want %.0f%% to %.0f%%", 100*frac, 100*tc.minRefused, 100*tc.maxRefused)
			}
		})
	}
}

// Seats found through the web layer's lookup, cached: a click costs no
// lookup within a minute, a made-up token one a minute, and a request with
// no token none.
func TestSeatCache_LooksEachTokenUpOnceAMinute(t *testing.T) {
	lookups := 0
	seats := map[string]string{"tok-ada": "L1", "tok-bob": "L2"}
	c := NewSeatCache(func(r *http.Request) string { return r.Header.Get("X-Seat-Token") },
		func(_ context.Context, token string) (string, bool) {
			lookups++
			s, ok := seats[token]
			return s, ok
		})
	now := time.Unix(1_700_000_000, 0)
	c.Now = func() time.Time { return now }
	l := NewShareLimiter(DefaultShare(), false)
	l.Seats = c
	req := func(token string) *http.Request {
		r := httptest.NewRequest("GET", "/playground", nil)
		r.RemoteAddr = "203.0.113.5:999"
		if token != "" {
			r.Header.Set("X-Seat-Token", token)
		}
		return r
	}
	for _, tc := range []struct {
		token, want string
		lookups     int
	}{
		{"tok-ada", "203.0.113.5#L1", 1},
		{"tok-ada", "203.0.113.5#L1", 1},
		{"tok-bob", "203.0.113.5#L2", 2},
		{"made-up", "203.0.113.5", 3},
		{"made-up", "203.0.113.5", 3},
		{"", "203.0.113.5", 3},
	} {
		if got := l.ClientOf(req(tc.token)); got != tc.want || lookups != tc.lookups {
			t.Errorf("token %q: client %q after %d lookups; want %q after %d", tc.token, got, lookups, tc.want, tc.lookups)
		}
	}
	now = now.Add(seatCacheTTL)
	if got := l.ClientOf(req("tok-ada")); got != "203.0.113.5#L1" || lookups != 4 {
		t.Errorf("a minute later: client %q after %d lookups; want a fresh lookup", got, lookups)
	}
	// A seat named by the context wins, with no lookup.
	named := req("tok-bob").WithContext(WithSeat(context.Background(), "L9"))
	if got := l.ClientOf(named); got != "203.0.113.5#L9" || lookups != 4 {
		t.Errorf("a seat in the context: client %q after %d lookups", got, lookups)
	}
	// A removed learner's seat is forgotten: their token is looked up again.
	delete(seats, "tok-ada")
	c.Forget("L1")
	if got := l.ClientOf(req("tok-ada")); got != "203.0.113.5" || lookups != 5 {
		t.Errorf("after Forget: client %q after %d lookups; want the address after a fresh lookup", got, lookups)
	}
	if got := l.ClientOf(req("tok-bob")); got != "203.0.113.5#L2" || lookups != 6 {
		t.Errorf("Forget of another seat: bob's client %q after %d lookups", got, lookups)
	}
}
