package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A served site under slowloris from one address (each connection sends
// half a header and waits): that address reaches its cap and is refused
// more, while GET / from other loopback addresses is answered at once.
func TestServe_SlowlorisFromOneAddressDoesNotStarveGetIndex(t *testing.T) {
	srv := startServe(t, "-conns-per-address", "16")
	addr := strings.TrimPrefix(srv.URL, "http://")
	attacker := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 2 * time.Second}
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 200 {
		c, err := attacker.Dial("tcp", addr)
		if err != nil {
			t.Skipf("dialling from 127.0.0.2: %v (this machine does not route all of 127/8)", err)
		}
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n")
		held = append(held, c)
	}
	// Of the 200, 16 are held open; the rest were refused and closed.
	open := 0
	for _, c := range held {
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err != nil && strings.Contains(err.Error(), "timeout") {
			open++
		}
	}
	if open != 16 {
		t.Errorf("%d of 200 slow connections from one address held open; want the cap, 16", open)
	}
	for _, from := range []string{"127.0.0.3", "127.0.0.4", "127.0.0.1"} {
		tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}).DialContext}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/", nil)
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		took := time.Since(start)
		cancel()
		if err != nil {
			t.Fatalf("GET / from %s: %v", from, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		tr.CloseIdleConnections()
		if resp.StatusCode != http.StatusOK || took > 500*time.Millisecond {
			t.Errorf("GET / from %s under slowloris: %d in %v; want 200 at once", from, resp.StatusCode, took)
		}
	}
}

func TestParseServeConfig_LimitsFromFlagsAndEnv(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		env       map[string]string
		rate      float64
		burst     float64
		seats     int
		conns     int
		wantUsage string
	}{
		{name: "Defaults", rate: 2, burst: 20, seats: 100, conns: 512},
		{name: "BehindAProxyNoConnectionCap", args: []string{"-trust-proxy"}, rate: 2, burst: 20, seats: 100, conns: 0},
		{name: "BehindAProxyAGivenCapHolds", args: []string{"-trust-proxy", "-conns-per-address", "2000"}, rate: 2, burst: 20, seats: 100, conns: 2000},
		{name: "Flags", args: []string{"-share-rate", "5", "-share-burst", "40", "-share-seats", "200", "-conns-per-address", "0"}, rate: 5, burst: 40, seats: 200, conns: 0},
		{name: "Env", env: map[string]string{"IDEMLAB_SHARE_RATE": "0.5", "IDEMLAB_SHARE_BURST": "10", "IDEMLAB_SHARE_SEATS": "60", "IDEMLAB_CONNS_PER_ADDRESS": "64"}, rate: 0.5, burst: 10, seats: 60, conns: 64},
		{name: "FlagWinsOverEnv", args: []string{"-share-rate", "3"}, env: map[string]string{"IDEMLAB_SHARE_RATE": "0.5"}, rate: 3, burst: 20, seats: 100, conns: 512},
		{name: "NoSeatsCounted", args: []string{"-share-seats", "0"}, rate: 2, burst: 20, seats: -1, conns: 512},
		{name: "ZeroRate", args: []string{"-share-rate", "0"}, wantUsage: "-share-rate"},
		{name: "BurstUnderOne", args: []string{"-share-burst", "0.5"}, wantUsage: "-share-burst"},
		{name: "BadEnv", env: map[string]string{"IDEMLAB_SHARE_BURST": "lots"}, wantUsage: "IDEMLAB_SHARE_BURST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseServeConfig(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
			if tc.wantUsage != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantUsage) {
					t.Fatalf("error %v; want a usage error naming %s", err, tc.wantUsage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			l := cfg.Limits
			if l.Share.PerSecond != tc.rate || l.Share.Burst != tc.burst || l.Share.SeatsPerAddress != tc.seats || l.ConnsPerAddress != tc.conns {
				t.Errorf("limits %+v; want rate %v, burst %v, seats %d, conns %d", l, tc.rate, tc.burst, tc.seats, tc.conns)
			}
		})
	}
}
