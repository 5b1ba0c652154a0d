package workshopweb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"idemlab/web/admit"
	"idemlab/web/site"
	"idemlab/workshop"
	"idemlab/workshop/sqlitestore"
)

// streamSite is a real HTTP server answering the learners' stream, with
// small stream caps, and the room its learners join.
type streamSite struct {
	srv  *httptest.Server
	svc  *workshop.Service
	ws   *State
	code workshop.Code
}

func newStreamSite(t *testing.T, perSeat, perRoom, perAddress int) *streamSite {
	t.Helper()
	store, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), sqlitestore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc := workshop.NewService(store, nil)
	ws, err := NewState(&Config{Service: svc, InstructorKey: "0123456789abcdef0123456789abcdef"}, "")
	if err != nil {
		t.Fatal(err)
	}
	ws.streams.perSeat, ws.streams.perRoom, ws.streams.perAddress = perSeat, perRoom, perAddress
	pages := &Pages{Workshop: ws, Limiter: admit.NewRateLimiter(1, 1, false)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/room/stream", func(w http.ResponseWriter, r *http.Request) {
		if err := pages.serveLearnerStream(w, r); err != nil {
			var se *site.Error
			if !errors.As(err, &se) {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			if se.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(se.RetryAfter))
			}
			http.Error(w, se.Message, se.Status)
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	room, err := svc.CreateRoom(t.Context(), "form-key-room-1", workshop.RoomSpec{Name: "Streams", Lessons: []string{"a-lesson"}})
	if err != nil {
		t.Fatal(err)
	}
	return &streamSite{srv: srv, svc: svc, ws: ws, code: room.Code}
}

// join seats a learner, joining from address.
func (s *streamSite) join(t *testing.T, address, name string) workshop.Token {
	t.Helper()
	_, l, err := s.svc.JoinFrom(t.Context(), address, s.code, workshop.Key("join-key-"+name), name)
	if err != nil {
		t.Fatal(err)
	}
	return l.Token
}

// stream is one open stream, or the refusal of one.
type stream struct {
	status     int
	retryAfter string
	body       string // a refusal's
	close      func()
}

// open opens a learner's stream from address (127.0.0.x: the loopback
// network answers every one of them) and reads until the stream has
// started, so that the server counts it.
func (s *streamSite) open(t *testing.T, address string, token workshop.Token) stream {
	t.Helper()
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(address)}}
	client := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true}}
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, "GET", s.srv.URL+"/api/v1/room/stream?ws="+string(token), nil)
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	st := stream{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), close: func() { cancel(); resp.Body.Close() }}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		st.body = string(b)
		st.close()
		return st
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "retry:") {
		t.Fatalf("the stream began %q (%v)", line, err)
	}
	t.Cleanup(st.close)
	return st
}

// openOnceFreed opens a stream again after one was closed: the server
// sees the close when it reads the connection's end, so it is tried until
// it is let in (or the test's deadline).
func (s *streamSite) openOnceFreed(t *testing.T, address string, token workshop.Token) stream {
	t.Helper()
	for {
		st := s.open(t, address, token)
		if st.status != http.StatusTooManyRequests {
			return st
		}
		select {
		case <-t.Context().Done():
			t.Fatal("a closed stream's place was never freed")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Live streams are capped per seat, per room and per address: a stream
// past a cap is a 429 with Retry-After that names the cap, the open ones
// go on, and a closed one frees its place.
func TestStreams_CappedPerSeatRoomAndAddress(t *testing.T) {
	cases := []struct {
		name                      string
		perSeat, perRoom, perAddr int
		opens                     []struct{ address, learner string } // every one is let in
		past                      struct{ address, learner string }   // this one is refused
		says                      string
		other                     struct{ address, learner string } // still let in
	}{
		{name: "seat", perSeat: 2, perRoom: 100, perAddr: 100,
			opens: []struct{ address, learner string }{{"127.0.0.2", "ada"}, {"127.0.0.2", "ada"}},
			past:  struct{ address, learner string }{"127.0.0.3", "ada"}, says: "open in 2 pages of yours",
			other: struct{ address, learner string }{"127.0.0.2", "bob"}},
		{name: "address", perSeat: 100, perRoom: 100, perAddr: 3,
			opens: []struct{ address, learner string }{{"127.0.0.2", "ada"}, {"127.0.0.2", "bob"}, {"127.0.0.2", "cy"}},
			past:  struct{ address, learner string }{"127.0.0.2", "dee"}, says: "Your address (a shared network) already has 3",
			other: struct{ address, learner string }{"127.0.0.3", "dee"}},
		{name: "room", perSeat: 100, perRoom: 3, perAddr: 100,
			opens: []struct{ address, learner string }{{"127.0.0.2", "ada"}, {"127.0.0.3", "bob"}, {"127.0.0.4", "cy"}},
			past:  struct{ address, learner string }{"127.0.0.5", "dee"}, says: "This room already has 3 live pages",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStreamSite(t, tc.perSeat, tc.perRoom, tc.perAddr)
			tokens := map[string]workshop.Token{}
			token := func(name string) workshop.Token {
				if tokens[name] == "" {
					tokens[name] = s.join(t, "127.0.0.2", name)
				}
				return tokens[name]
			}
			var open []stream
			for i, o := range tc.opens {
				st := s.open(t, o.address, token(o.learner))
				if st.status != http.StatusOK {
					t.Fatalf("stream %d (%s from %s): %d %s, want it open", i+1, o.learner, o.address, st.status, st.body)
				}
				open = append(open, st)
			}
			st := s.open(t, tc.past.address, token(tc.past.learner))
			if st.status != http.StatusTooManyRequests || st.retryAfter != strconv.Itoa(streamRetryAfter) || !strings.Contains(st.body, tc.says) {
				t.Fatalf("the stream past the %s cap: %d (Retry-After %q) %q; want 429 with Retry-After %d saying %q",
					tc.name, st.status, st.retryAfter, st.body, streamRetryAfter, tc.says)
			}
			if tc.other.learner != "" {
				if st := s.open(t, tc.other.address, token(tc.other.learner)); st.status != http.StatusOK {
					t.Errorf("%s from %s, under every cap: %d %s", tc.other.learner, tc.other.address, st.status, st.body)
				} else {
					st.close()
				}
			}
			open[0].close()
			if st := s.openOnceFreed(t, tc.past.address, token(tc.past.learner)); st.status != http.StatusOK {
				t.Errorf("after a stream closed: %d %s, want the refused one let in", st.status, st.body)
			}
		})
	}
}

// The caps are counted exactly: a thousand streams opening and closing at
// once (some refused), each closed twice, leave nothing counted.
func TestStreamCaps_ReleaseLeavesNothingCounted(t *testing.T) {
	var c streamCaps
	done := make(chan error)
	for i := range 1000 {
		go func() {
			release, err := c.take(fmt.Sprint("learner ", i%10), int64(i%3), fmt.Sprint("192.0.2.", i%7))
			if err == nil {
				release()
				release() // twice changes nothing
			}
			done <- err
		}()
	}
	refused := 0
	for range 1000 {
		if err := <-done; err != nil {
			refused++
		}
	}
	if refused == 1000 {
		t.Fatal("every stream was refused")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.open) != 0 {
		t.Errorf("after every stream closed, still counted: %v", c.open)
	}
}
