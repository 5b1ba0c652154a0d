package connlimit

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serve starts an HTTP server on 127.0.0.1 behind a Listener with the
// caps, whose handler answers "ok"; it returns the listener and address.
func serve(t *testing.T, perAddress, total int, headerTimeout time.Duration) (*Listener, string) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := New(inner, perAddress, total)
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }),
		ReadHeaderTimeout: headerTimeout,
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l, inner.Addr().String()
}

// dialFrom opens a TCP connection to addr from the loopback address from
// (all of 127/8 is loopback on Linux).
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 2 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Skipf("dialling from %s: %v (this machine does not route all of 127/8)", from, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// slowloris opens n connections from one address that each send half a
// request header and nothing more.
func slowloris(t *testing.T, from, addr string, n int) []net.Conn {
	t.Helper()
	var cs []net.Conn
	for range n {
		c := dialFrom(t, from, addr)
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n"); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	return cs
}

// getFrom is a GET / from the loopback address from, and how long it took.
func getFrom(t *testing.T, from, addr string) (status int, took time.Duration, err error) {
	t.Helper()
	tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}).DialContext, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/", nil)
	start := time.Now()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return 0, time.Since(start), err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, time.Since(start), nil
}

// waitOpen waits until addr has n connections open.
func waitOpen(t *testing.T, l *Listener, addr string, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); l.Open(addr) != n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d connections open; want %d", addr, l.Open(addr), n)
		}
	}
}

// One address at its cap (slowloris: half a header each) is refused a
// connection more, while another address's GET / is answered at once; a
// closed connection makes room again.
func TestListener_OneAddressAtItsCapDoesNotStopAnother(t *testing.T) {
	l, addr := serve(t, 8, 0, 10*time.Second)
	held := slowloris(t, "127.0.0.2", addr, 8)
	waitOpen(t, l, "127.0.0.2", 8)

	over := dialFrom(t, "127.0.0.2", addr)
	over.SetReadDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(over).ReadString('\n')
	if err != nil && !strings.Contains(err.Error(), "reset") && err != io.EOF {
		t.Fatalf("a connection over the cap: %v; want a refusal or a close", err)
	}
	if line != "" && !strings.HasPrefix(line, "HTTP/1.1 503") {
		t.Errorf("a connection over the cap read %q; want a 503", line)
	}
	if l.Refusals() != 1 {
		t.Errorf("%d refusals; want 1", l.Refusals())
	}

	for _, from := range []string{"127.0.0.3", "127.0.0.4"} {
		status, took, err := getFrom(t, from, addr)
		if err != nil || status != http.StatusOK {
			t.Fatalf("GET / from %s while 127.0.0.2 is at its cap: %d, %v", from, status, err)
		}
		if took > time.Second {
			t.Errorf("GET / from %s took %v", from, took)
		}
	}

	held[0].Close()
	waitOpen(t, l, "127.0.0.2", 7)
	if status, _, err := getFrom(t, "127.0.0.2", addr); err != nil || status != http.StatusOK {
		t.Errorf("GET / from 127.0.0.2 after one of its connections closed: %d, %v", status, err)
	}
}

// The server's header timeout closes a slowloris connection, and the
// listener counts it out: the address's connections come back.
func TestListener_HeaderTimeoutGivesTheConnectionsBack(t *testing.T) {
	l, addr := serve(t, 4, 0, 200*time.Millisecond)
	slowloris(t, "127.0.0.5", addr, 4)
	waitOpen(t, l, "127.0.0.5", 4)
	waitOpen(t, l, "127.0.0.5", 0)
	if status, _, err := getFrom(t, "127.0.0.5", addr); err != nil || status != http.StatusOK {
		t.Errorf("GET / once the header timeout closed the others: %d, %v", status, err)
	}
}

// The total cap holds across addresses.
func TestListener_TotalCapHoldsAcrossAddresses(t *testing.T) {
	l, addr := serve(t, 0, 3, 10*time.Second)
	slowloris(t, "127.0.0.6", addr, 2)
	slowloris(t, "127.0.0.7", addr, 1)
	waitOpen(t, l, "127.0.0.7", 1)
	waitOpen(t, l, "127.0.0.6", 2)
	if _, _, err := getFrom(t, "127.0.0.8", addr); err == nil {
		// The refusal may arrive as a 503 before the close: also fine.
		if l.Refusals() != 1 {
			t.Errorf("%d refusals over the total cap; want 1", l.Refusals())
		}
	}
	if l.Refusals() != 1 {
		t.Errorf("%d refusals; want 1", l.Refusals())
	}
}

func BenchmarkListener_AcceptAndClose(b *testing.B) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	l := New(inner, 4, 0)
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	for b.Loop() {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		c.Read(make([]byte, 1))
		c.Close()
	}
}
