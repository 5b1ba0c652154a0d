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

	"idemlab/workshop/sqlitestore"
)

const killTestKey = "kill-test-instructor-key"

// startServer runs `idemlab serve` as a real process on a free port and
// returns it with its base URL.
func startServer(t *testing.T, dataDir string) (*exec.Cmd, string) {
	t.Helper()
	cmd := mainCommand(t, "serve", "-addr", "127.0.0.1:0", "-data", dataDir, "-instructor-key", killTestKey)
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

// TestServe_KillNineLosesNothingAcknowledged kills the server with SIGKILL
// while learners post events, restarts it on the same data, and lets the
// learners retry everything as their browsers would: every event that got
// a 2xx before the kill is stored, and every event is stored exactly once.
func TestServe_KillNineLosesNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server twice")
	}
	dataDir := t.TempDir()
	cmd, base := startServer(t, dataDir)

	jar, _ := cookiejar.New(nil)
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	instructor := &http.Client{Jar: jar, CheckRedirect: noRedirect, Timeout: 10 * time.Second}
	if _, err := instructor.Get(base + "/workshop?key=" + killTestKey); err != nil {
		t.Fatal(err)
	}
	resp, err := instructor.PostForm(base+"/workshop/rooms", url.Values{"key": {"kill-room-key"}, "name": {"Storm"}, "lesson": {"why-messages-arrive-twice"}})
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("create room: %v %v", resp, err)
	}
	store, err := sqlitestore.Open(t.Context(), filepath.Join(dataDir, sqlitestore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	rooms, err := store.Rooms(t.Context())
	store.Close()
	if err != nil || len(rooms) != 1 {
		t.Fatalf("rooms: %v %v", rooms, err)
	}
	room := rooms[0]

	const learners, events = 12, 40
	clients := make([]*http.Client, learners)
	for i := range clients {
		jar, _ := cookiejar.New(nil) // cookies are per host, not port: they survive the restart
		clients[i] = &http.Client{Jar: jar, CheckRedirect: noRedirect, Timeout: 10 * time.Second}
		resp, err := clients[i].PostForm(base+"/join", url.Values{"key": {fmt.Sprintf("join-key-%04d", i)}, "code": {string(room.Code)}, "name": {fmt.Sprintf("Learner %d", i)}})
		if err != nil || resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("join %d: %v %v", i, resp, err)
		}
	}
	send := func(c *http.Client, base string, learner, n int) (int, error) {
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

	// The storm, and the kill in the middle of it.
	acked := make([]map[int]bool, learners)
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for i := range learners {
		acked[i] = map[int]bool{}
		wg.Go(func() {
			for n := range events {
				status, err := send(clients[i], base, i, n)
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
		if n >= learners*events/3 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no shutdown, no flush
		t.Fatal(err)
	}
	cmd.Wait()
	wg.Wait()
	mu.Lock()
	ackedBeforeKill := total
	mu.Unlock()
	if ackedBeforeKill == learners*events {
		t.Fatal("every event was acknowledged before the kill; the test proves nothing")
	}

	// Restart on the same data; every browser retries its whole queue.
	_, base2 := startServer(t, dataDir)
	for i := range learners {
		wg.Go(func() {
			for n := range events {
				for attempt := 0; ; attempt++ {
					status, err := send(clients[i], base2, i, n)
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

	store, err = sqlitestore.Open(t.Context(), filepath.Join(dataDir, sqlitestore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
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
	for i := range learners {
		for n := range events {
			item := fmt.Sprintf("g-%d-%d", i, n)
			if seen[item] != 1 {
				t.Errorf("%s stored %d times, want once (acknowledged before the kill: %v)", item, seen[item], acked[i][n])
			}
		}
	}
	t.Logf("%d of %d events acknowledged before SIGKILL; after the restart and retries, all %d stored once", ackedBeforeKill, learners*events, len(seen))
}
