package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"idemlab/workshop"
	"idemlab/workshop/sqlitestore"
)

const killTestKey = "6b696c6c2d746573742d6b65792d3031" // hex of "kill-test-key-01"

// startServer runs `idemlab serve` with args as a real process on a free
// port and returns it with its base URL.
func startServer(t testing.TB, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := mainCommand(t, append([]string{"serve", "-addr", "127.0.0.1:0", "-instructor-key", killTestKey}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := regexp.MustCompile(`serving the course at (http://\S+)/`).FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case u := <-found:
		return cmd, u
	case <-time.After(60 * time.Second):
		t.Fatal("the server did not start within a minute")
	}
	return nil, ""
}

// newBrowser is an HTTP client with its own cookies that does not follow
// redirects. Cookies are per host, not port: they go to every server of
// the test.
func newBrowser() *http.Client {
	jar, _ := cookiejar.New(nil)
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &http.Client{Jar: jar, CheckRedirect: noRedirect, Timeout: 10 * time.Second}
}

// createStormRoom signs the instructor in on base and creates a room; it
// returns the instructor's browser and the room, as openStore reads it.
func createStormRoom(t testing.TB, base string, openStore func() workshop.Store) (*http.Client, workshop.Room) {
	t.Helper()
	instructor := newBrowser()
	if _, err := instructor.Get(base + "/workshop?key=" + killTestKey); err != nil {
		t.Fatal(err)
	}
	resp, err := instructor.PostForm(base+"/workshop/rooms", url.Values{"key": {"kill-room-key"}, "name": {"Storm"}, "lesson": {"why-messages-arrive-twice"}})
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("create room: %v %v", resp, err)
	}
	store := openStore()
	defer store.Close()
	rooms, err := store.Rooms(t.Context())
	if err != nil || len(rooms) != 1 {
		t.Fatalf("rooms: %v %v", rooms, err)
	}
	return instructor, rooms[0]
}

// joinLearners joins n learners to the room through base.
func joinLearners(t testing.TB, base string, room workshop.Room, n int) []*http.Client {
	t.Helper()
	clients := make([]*http.Client, n)
	for i := range clients {
		clients[i] = newBrowser()
		resp, err := clients[i].PostForm(base+"/join", url.Values{"key": {fmt.Sprintf("join-key-%04d", i)}, "code": {string(room.Code)}, "name": {fmt.Sprintf("Learner %d", i)}})
		if err != nil || resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("join %d: %v %v", i, resp, err)
		}
	}
	return clients
}

// sendGoal posts learner's n-th event to base, with the key a browser
// would retry it with.
func sendGoal(c *http.Client, base string, learner, n int) (int, error) {
	body := fmt.Sprintf(`{"kind":"goal_reached","lesson":"why-messages-arrive-twice","goal":"g-%d-%d"}`, learner, n)
	req, _ := http.NewRequest("POST", base+"/api/v1/room/events", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", fmt.Sprintf("storm-%04d-%04d", learner, n))
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// killDuringStorm has the learners post events to base as fast as they
// can, SIGKILLs cmd a third of the way through, and returns what was
// acknowledged before.
func killDuringStorm(t *testing.T, cmd *exec.Cmd, base string, clients []*http.Client, events int) (acked []map[int]bool, total int) {
	t.Helper()
	acked = make([]map[int]bool, len(clients))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range clients {
		acked[i] = map[int]bool{}
		wg.Go(func() {
			for n := range events {
				status, err := sendGoal(clients[i], base, i, n)
				if err != nil {
					return // the server died
				}
				if status >= 200 && status < 300 {
					mu.Lock()
					acked[i][n] = true
					total++
					mu.Unlock()
				}
			}
		})
	}
	for {
		mu.Lock()
		n := total
		mu.Unlock()
		if n >= len(clients)*events/3 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no shutdown, no flush
		t.Fatal(err)
	}
	cmd.Wait()
	wg.Wait()
	if total == len(clients)*events {
		t.Fatal("every event was acknowledged before the kill; the test proves nothing")
	}
	return acked, total
}

// retryAll has every browser retry its whole queue against base, with the
// same keys, until each event is 201.
func retryAll(t *testing.T, base string, clients []*http.Client, events int) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			for n := range events {
				for attempt := 0; ; attempt++ {
					status, err := sendGoal(clients[i], base, i, n)
					if err == nil && status == http.StatusCreated {
						break
					}
					if attempt > 50 {
						t.Errorf("learner %d event %d: %d %v", i, n, status, err)
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
}

// checkStoredOnce checks that the store holds every learner's every event
// exactly once.
func checkStoredOnce(t *testing.T, store workshop.Store, room workshop.Room, acked []map[int]bool, events int) int {
	t.Helper()
	all, err := store.Events(t.Context(), room.ID, 0, false, 100000)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, e := range all {
		if e.Item != "" {
			seen[e.Item]++
		}
	}
	for i := range acked {
		for n := range events {
			item := fmt.Sprintf("g-%d-%d", i, n)
			if seen[item] != 1 {
				t.Errorf("%s stored %d times, want once (acknowledged before the kill: %v)", item, seen[item], acked[i][n])
			}
		}
	}
	return len(seen)
}

// TestServe_KillNineLosesNothingAcknowledged kills the server with SIGKILL
// while learners post events, restarts it on the same data, and lets the
// learners retry everything as their browsers would: every event that got
// a 2xx before the kill is stored, and every event is stored exactly once.
func TestServe_KillNineLosesNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server twice")
	}
	dataDir := t.TempDir()
	openStore := func() workshop.Store {
		s, err := sqlitestore.Open(t.Context(), filepath.Join(dataDir, sqlitestore.FileName))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cmd, base := startServer(t, "-data", dataDir)
	_, room := createStormRoom(t, base, openStore)
	const learners, events = 12, 40
	clients := joinLearners(t, base, room, learners)
	acked, ackedBeforeKill := killDuringStorm(t, cmd, base, clients, events)

	// Restart on the same data; every browser retries its whole queue.
	_, base2 := startServer(t, "-data", dataDir)
	retryAll(t, base2, clients, events)

	store := openStore()
	defer store.Close()
	n := checkStoredOnce(t, store, room, acked, events)
	t.Logf("%d of %d events acknowledged before SIGKILL; after the restart and retries, all %d stored once", ackedBeforeKill, learners*events, n)
}
