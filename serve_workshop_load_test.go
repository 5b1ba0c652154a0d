package main

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"idemlab/internal/pgtest"
	"idemlab/workshop"
	"idemlab/workshop/sqlitestore"
)

// loadResult is what one load run measured.
type loadResult struct {
	posts, errors int
	p50, p99      time.Duration // a POST's answer
	fanout99      time.Duration // from a POST's start to its row on every class view
	heard, missed int           // rows a class view showed, and ones it never did
}

// workshopLoad has learners, spread evenly over the servers at bases, post
// an event every period for duration, with the instructor's class view
// open on every server, and measures answers and fan-out.
func workshopLoad(b *testing.B, bases []string, learners int, openStore func() workshop.Store) loadResult {
	const period, duration = 5 * time.Second, 30 * time.Second
	instructor, room := createStormRoom(b, bases[0], openStore)
	transport := &http.Transport{MaxIdleConnsPerHost: learners}
	clients := make([]*http.Client, learners)
	for i := range clients {
		clients[i] = newBrowser()
		clients[i].Transport = transport
		resp, err := clients[i].PostForm(bases[i%len(bases)]+"/join", url.Values{"key": {fmt.Sprintf("join-key-%05d", i)}, "code": {string(room.Code)}, "name": {fmt.Sprint("L", i)}})
		if err != nil || resp.StatusCode != http.StatusSeeOther {
			b.Fatalf("join %d: %v %v", i, resp, err)
		}
		resp.Body.Close()
	}
	// Every class view notes when each learner's row arrives after a POST.
	var mu sync.Mutex
	sent := map[string]time.Time{}        // learner name → start of the POST
	heardBy := make([]map[string]bool, 0) // per view: names heard since their POST
	var fanout []time.Duration
	var heard int
	for v, base := range bases {
		heardBy = append(heardBy, map[string]bool{})
		class := openStream(b, instructor, fmt.Sprintf("%s/workshop/rooms/%d/stream", base, room.ID))
		go func() {
			for e := range class {
				i := strings.Index(e.data, `ws-row-name">`)
				if e.name != "row" || i < 0 {
					continue
				}
				name := e.data[i+len(`ws-row-name">`):]
				name = name[:strings.IndexByte(name, '<')]
				mu.Lock()
				if at, ok := sent[name]; ok && !heardBy[v][name] {
					heardBy[v][name] = true
					heard++
					fanout = append(fanout, e.at.Sub(at))
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(time.Second)

	var latencies []time.Duration
	var errs, missed int
	var wg sync.WaitGroup
	start := time.Now()
	for i := range learners {
		wg.Go(func() {
			name := fmt.Sprint("L", i)
			time.Sleep(time.Duration(i) * period / time.Duration(learners)) // spread the class over the period
			for n := 0; time.Since(start) < duration; n++ {
				mu.Lock()
				for v := range heardBy {
					if _, ok := sent[name]; ok && !heardBy[v][name] {
						missed++
					}
					delete(heardBy[v], name)
				}
				t0 := time.Now()
				sent[name] = t0
				mu.Unlock()
				status, err := sendGoal(clients[i], bases[i%len(bases)], i, n)
				d := time.Since(t0)
				mu.Lock()
				latencies = append(latencies, d)
				if err != nil || status != http.StatusCreated {
					errs++
				}
				mu.Unlock()
				time.Sleep(period - d%period)
			}
		})
	}
	wg.Wait()
	time.Sleep(2 * time.Second) // the last rows arrive
	mu.Lock()
	defer mu.Unlock()
	for name := range sent {
		for v := range heardBy {
			if !heardBy[v][name] {
				missed++
			}
		}
	}
	slices.Sort(latencies)
	slices.Sort(fanout)
	pct := func(ds []time.Duration, p float64) time.Duration {
		if len(ds) == 0 {
			return 0
		}
		return ds[min(len(ds)-1, int(float64(len(ds))*p))]
	}
	return loadResult{posts: len(latencies), errors: errs, p50: pct(latencies, 0.50), p99: pct(latencies, 0.99),
		fanout99: pct(fanout, 0.99), heard: heard, missed: missed}
}

// BenchmarkWorkshop_Replicas is issue 13's load, in one run: 1,000
// learners across two server processes on one PostgreSQL database, each
// posting an event every 5 s for 30 s, with a class view on each server;
// then the same against the SQLite store on one server at 500 learners.
// Servers are real processes; the learners are this process.
// Run it once: go test . -run '^$' -bench Workshop_Replicas -benchtime 1x
// (with IDEMLAB_TEST_DATABASE set; see internal/pgtest).
func BenchmarkWorkshop_Replicas(b *testing.B) {
	for range b.N {
		dataDir := b.TempDir()
		_, lite := startServer(b, "-data", dataDir)
		sqlite := workshopLoad(b, []string{lite}, 500, func() workshop.Store {
			s, err := sqlitestore.Open(b.Context(), filepath.Join(dataDir, sqlitestore.FileName))
			if err != nil {
				b.Fatal(err)
			}
			return s
		})
		db := pgtest.Database(b)
		pg := workshopLoad(b, []string{startReplica(b, db), startReplica(b, db)}, 1000, pgOpener(b, db))
		for _, r := range []struct {
			name string
			loadResult
		}{{"sqlite-1x500", sqlite}, {"postgres-2x1000", pg}} {
			fmt.Fprintf(os.Stderr, "%s: %d posts, %d errors, p50 %v, p99 %v; class views heard %d rows, fan-out p99 %v, %d rows never heard\n",
				r.name, r.posts, r.errors, r.p50.Round(time.Millisecond), r.p99.Round(time.Millisecond), r.heard, r.fanout99.Round(time.Millisecond), r.missed)
			b.ReportMetric(float64(r.errors), r.name+"-errors")
			b.ReportMetric(float64(r.p99.Milliseconds()), r.name+"-p99-ms")
			b.ReportMetric(float64(r.fanout99.Milliseconds()), r.name+"-fanout-p99-ms")
		}
	}
}
