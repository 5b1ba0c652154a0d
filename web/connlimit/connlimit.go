// Package connlimit bounds the connections a server holds open: a
// net.Listener wrapper that keeps at most PerAddress connections open from
// one remote address, and at most Total in all. A connection past either
// cap is answered at once with a plain 503 and Retry-After and closed,
// before any of its bytes are read, so that one address opening thousands
// of connections (slowloris, or thousands of event streams) cannot take
// the file descriptors and memory every other visitor's GET / needs.
//
// The address is the TCP peer's: behind a reverse proxy every connection
// comes from the proxy, which is then the one to cap connections per
// visitor (serve turns the per-address cap off with -trust-proxy).
//
// connlimit knows nothing of HTTP beyond the refusal's few bytes.
package connlimit

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// refusal is written to a connection over a cap, best effort (the peer's
// request is never read, so a close may reset the connection first): a
// browser shows it, a client library retries after it.
const refusal = "HTTP/1.1 503 Service Unavailable\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\n" +
	"Retry-After: 5\r\n" +
	"Connection: close\r\n" +
	"Content-Length: 72\r\n" +
	"\r\n" +
	refusalBody

const refusalBody = "Too many connections from your address are open. Try again in a moment.\n"

// refusalWriteTimeout bounds the write of a refusal, so that a peer that
// never reads cannot hold up Accept.
const refusalWriteTimeout = 50 * time.Millisecond

// Listener is a net.Listener that caps open connections per remote
// address (PerAddress) and in all (Total); 0 is no cap.
type Listener struct {
	net.Listener
	PerAddress int
	Total      int
	// Refused, if not nil, is told of each connection refused and why:
	// "address" or "total" (a metric's counter).
	Refused func(reason string)

	mu     sync.Mutex
	open   map[string]int // by remote address
	total  int
	closed atomic.Int64 // refusals, for tests
}

// New wraps inner: at most perAddress connections open from one address,
// and total in all (0: no cap).
func New(inner net.Listener, perAddress, total int) *Listener {
	return &Listener{Listener: inner, PerAddress: perAddress, Total: total, open: map[string]int{}}
}

// Accept returns the next connection within the caps; connections over a
// cap are refused and closed on the way.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := hostOf(c.RemoteAddr())
		if reason := l.admit(addr); reason != "" {
			l.refuse(c, reason)
			continue
		}
		return &conn{Conn: c, l: l, addr: addr}, nil
	}
}

// admit counts a connection from addr in, or says which cap it is over.
func (l *Listener) admit(addr string) (overCap string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.Total > 0 && l.total >= l.Total:
		return "total"
	case l.PerAddress > 0 && l.open[addr] >= l.PerAddress:
		return "address"
	}
	l.open[addr]++
	l.total++
	return ""
}

// release counts a connection from addr out.
func (l *Listener) release(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.open[addr]--; l.open[addr] <= 0 {
		delete(l.open, addr)
	}
}

func (l *Listener) refuse(c net.Conn, reason string) {
	l.closed.Add(1)
	if l.Refused != nil {
		l.Refused(reason)
	}
	c.SetWriteDeadline(time.Now().Add(refusalWriteTimeout))
	c.Write([]byte(refusal))
	c.Close()
}

// Open is the number of connections open from addr (a host, no port).
func (l *Listener) Open(addr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open[addr]
}

// Refusals is the number of connections refused so far.
func (l *Listener) Refusals() int64 { return l.closed.Load() }

// conn counts itself out of its listener once, when closed.
type conn struct {
	net.Conn
	l    *Listener
	addr string
	once sync.Once
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.addr) })
	return err
}

// hostOf is the host of a remote address, without its port.
func hostOf(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}
