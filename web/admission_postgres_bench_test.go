package web

import (
	"fmt"
	"idemlab/web/playview"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkClosedLoop_PostgresPool is PostgreSQL clicks per second against
// the size of the ledger pool: for each size, 2 clients per ledger (each
// ledger busy, one run queued behind it: the pool saturated without
// overflowing its queue) send clicks back to back to a loopback server,
// uncached (benchServer), for rounds of a second. A click is the race of
// the ledger switch's test (concurrent-duplicate, two handlers, a lock
// wait each) at READ COMMITTED, its fragment gzipped as app.js asks for
// it. It reports clicks/s, the median and 90th percentile of a click's
// wall time, and busy/s (503s: the queue's bounds were crossed). The
// "sqlite" row is the same clicks on SQLite with 8 clients, in the same
// run, as the baseline; "one-client" is pool 1 and one client, the median
// click through the whole stack (the target: under 25 ms), and
// "one-client-lost-ack" the same for lost-ack's default script (no wait).
func BenchmarkClosedLoop_PostgresPool(b *testing.B) {
	const round = time.Second
	type row struct {
		name    string
		pool    int
		clients int
		query   string
	}
	const race, onPG = "/playground?" + raceQuery, "&ledger=postgres-rc"
	rows := []row{{"one-client", 1, 1, race + onPG}, {"one-client-lost-ack", 1, 1, "/playground?scenario=lost-ack" + onPG}}
	for _, size := range []int{1, 2, 4, 8} {
		rows = append(rows, row{fmt.Sprintf("pool=%d", size), size, 2 * size, race + onPG})
	}
	rows = append(rows, row{"sqlite", 1, 8, race})
	for _, r := range rows {
		b.Run(r.name, func(b *testing.B) {
			s := benchServerWith(b, Config{Ledgers: testLedgers(b, r.pool)})
			srv := httptest.NewServer(s.Handler())
			defer srv.Close()
			target := srv.URL + r.query + "&" + playview.FragmentParam + "=1"
			// Each client is a learner of its own (its own source address):
			// one client holds one ledger at a time.
			click := func(client *http.Client) (int, time.Duration) {
				req, _ := http.NewRequest(http.MethodGet, target, nil)
				req.Header.Set("Accept-Encoding", "gzip")
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp.StatusCode, time.Since(start)
			}
			if status, _ := click(clientAt("127.0.0.9")); status != http.StatusOK { // warm: every session open
				b.Fatalf("status %d", status)
			}
			var ok, busy atomic.Int64
			var mu sync.Mutex
			var times []time.Duration
			rounds := 0
			for b.Loop() {
				var wg sync.WaitGroup
				end := time.Now().Add(round)
				for c := range r.clients {
					client := clientAt(fmt.Sprintf("127.0.0.%d", 10+c))
					wg.Go(func() {
						var mine []time.Duration
						for time.Now().Before(end) {
							switch status, took := click(client); status {
							case http.StatusOK:
								ok.Add(1)
								mine = append(mine, took)
							case http.StatusServiceUnavailable:
								busy.Add(1)
							default:
								b.Errorf("status %d", status)
								return
							}
						}
						mu.Lock()
						times = append(times, mine...)
						mu.Unlock()
					})
				}
				wg.Wait()
				rounds++
			}
			if len(times) == 0 {
				b.Fatal("no click answered")
			}
			slices.Sort(times)
			secs := float64(rounds) * round.Seconds()
			b.ReportMetric(float64(ok.Load())/secs, "clicks/s")
			b.ReportMetric(float64(busy.Load())/secs, "busy/s")
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1e3, "median-ms")
			b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1e3, "p90-ms")
		})
	}
}
