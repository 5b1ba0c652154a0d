package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"idemlab/web/admit"
	"idemlab/web/connlimit"
)

// Limits of serve that protect the server's share of work and connections
// from any one client: the fair share of runs and checks (admit), and the
// connections one address may hold open (connlimit).
const (
	// serveConnsPerAddress is the default cap on connections open from
	// one address: a class of 60 behind one NAT, each browser with its
	// event stream and a few connections of its own, fits; one address
	// opening thousands does not.
	serveConnsPerAddress = 512
	// serveHeaderTimeout bounds the wait for a request's header: a
	// connection that sends it slowly (slowloris) is closed after this.
	serveHeaderTimeout = 5 * time.Second
	// fdReserve are file descriptors kept back from connections, for the
	// databases, lessons folders and logs.
	fdReserve = 256
)

// limitFlags are serve's -share-* and -conns-per-address settings.
type limitFlags struct {
	Share           admit.Share
	ConnsPerAddress int
	connsGiven      bool  // -conns-per-address or its variable was given
	envErr          error // an IDEMLAB_SHARE_* or IDEMLAB_CONNS_PER_ADDRESS that is not a number
}

// addLimitFlags declares the limit flags on fs.
func addLimitFlags(fs *flag.FlagSet, getenv func(string) string, f *limitFlags) {
	f.Share = admit.DefaultShare()
	f.ConnsPerAddress = serveConnsPerAddress
	envFloat := func(name string, into *float64) {
		if v := getenv(name); v != "" {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil && f.envErr == nil {
				f.envErr = fmt.Errorf("%s=%q: want a number", name, v)
			}
			*into = n
		}
	}
	envInt := func(name string, into *int) {
		if v := getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil && f.envErr == nil {
				f.envErr = fmt.Errorf("%s=%q: want a whole number", name, v)
			}
			*into = n
		}
	}
	envFloat("IDEMLAB_SHARE_RATE", &f.Share.PerSecond)
	envFloat("IDEMLAB_SHARE_BURST", &f.Share.Burst)
	envInt("IDEMLAB_SHARE_SEATS", &f.Share.SeatsPerAddress)
	envInt("IDEMLAB_CONNS_PER_ADDRESS", &f.ConnsPerAddress)
	f.connsGiven = getenv("IDEMLAB_CONNS_PER_ADDRESS") != ""
	fs.Float64Var(&f.Share.PerSecond, "share-rate", f.Share.PerSecond, "`N`: runs and checks a second one client gains in its fair share; a costly run costs more (env IDEMLAB_SHARE_RATE)")
	fs.Float64Var(&f.Share.Burst, "share-burst", f.Share.Burst, "`N`: runs one client may make in a quick burst (env IDEMLAB_SHARE_BURST)")
	fs.IntVar(&f.Share.SeatsPerAddress, "share-seats", f.Share.SeatsPerAddress, "`N`: in workshop rooms each seat has its own share, and an address's ceiling grows by one share per seat seen from it, up to N seats (env IDEMLAB_SHARE_SEATS)")
	fs.Var((*givenInt)(f), "conns-per-address", "`N`: connections one address may hold open, 0 for no cap; with -trust-proxy no cap unless given, every connection being the proxy's (env IDEMLAB_CONNS_PER_ADDRESS)")
}

// resolve checks the limits and picks the connection cap's default.
func (f *limitFlags) resolve(trustProxy bool) error {
	if f.envErr != nil {
		return usagef("serve: %v", f.envErr)
	}
	switch {
	case !(f.Share.PerSecond > 0):
		return usagef("serve: -share-rate %v: want more than 0", f.Share.PerSecond)
	case !(f.Share.Burst >= 1):
		return usagef("serve: -share-burst %v: want at least 1", f.Share.Burst)
	case f.Share.SeatsPerAddress < 0 || f.Share.SeatsPerAddress > 10_000:
		return usagef("serve: -share-seats %d: want 0 to 10000", f.Share.SeatsPerAddress)
	case f.ConnsPerAddress < 0:
		return usagef("serve: -conns-per-address %d: want 0 (no cap) or more", f.ConnsPerAddress)
	}
	if f.Share.SeatsPerAddress == 0 {
		f.Share.SeatsPerAddress = -1 // admit: no seat counted; 0 there is the default
	}
	if trustProxy && !f.connsGiven {
		f.ConnsPerAddress = 0
	}
	return nil
}

// givenInt is -conns-per-address, which remembers that it was given.
type givenInt limitFlags

func (g *givenInt) String() string {
	if g == nil {
		return "0"
	}
	return strconv.Itoa(g.ConnsPerAddress)
}

func (g *givenInt) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return errors.New("want a whole number")
	}
	g.ConnsPerAddress, g.connsGiven = n, true
	return nil
}

// limitConnections wraps ln in the caps: f's per address, and in all what
// the process's file descriptor limit leaves after fdReserve. Refusals are
// logged at most once a minute, with their count: a flood must not flood
// the log too.
func limitConnections(ln net.Listener, f limitFlags, logger *slog.Logger) *connlimit.Listener {
	total := 0
	if n := openFileLimit(); n > 0 {
		total = max(64, n-fdReserve)
	}
	l := connlimit.New(ln, f.ConnsPerAddress, total)
	var mu sync.Mutex
	var last time.Time
	var since int
	l.Refused = func(reason string) {
		mu.Lock()
		defer mu.Unlock()
		since++
		if time.Since(last) >= time.Minute {
			logger.Warn("connections refused: an address, or all together, at the cap", "refused", since, "last_cap", reason,
				"conns_per_address", f.ConnsPerAddress, "total", total)
			last, since = time.Now(), 0
		}
	}
	return l
}
