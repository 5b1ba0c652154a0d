package playground

import (
	"context"
	"slices"
	"testing"
	"time"
)

// BenchmarkClick_Postgres is a click on a PostgreSQL ledger: a request
// replays its script from the start, so a click is a whole run. Each
// scenario's default script with its handlers, on PostgreSQL at read
// committed and on SQLite (the baseline, in the same run); it reports the
// median wall time of a click (the target: under 25 ms on this
// machine) and the ratio to SQLite's. Each click runs within the server's
// budget (DefaultBudget), metered as a server's click is.
func BenchmarkClick_Postgres(b *testing.B) {
	pg := testPostgresLedgers(b, 1)
	ctx := context.Background()
	for _, name := range []string{"concurrent-duplicate", "lost-ack", "order-shipping"} {
		sc, err := LookupScenario(name)
		if err != nil {
			b.Fatal(err)
		}
		script := sc.DefaultScript
		if name == "concurrent-duplicate" {
			script = raceScript // two waits on a lock per handler that takes a key
		}
		b.Run(name, func(b *testing.B) {
			medians := map[string]float64{}
			for _, ledger := range []string{"sqlite", "postgres-rc"} {
				lg, err := ParseLedger(ledger, pg)
				if err != nil {
					b.Fatal(err)
				}
				req := Request{Scenario: name, Script: script, Ledger: lg}
				if _, err := Run(ctx, req); err != nil { // warm: sessions open
					b.Fatal(err)
				}
				var times []time.Duration
				for i := 0; i < max(b.N, 5); i++ {
					budget := DefaultBudget()
					req.Budget = &budget
					start := time.Now()
					if _, err := Run(ctx, req); err != nil {
						b.Fatal(err)
					}
					times = append(times, time.Since(start))
				}
				slices.Sort(times)
				medians[ledger] = float64(times[len(times)/2].Microseconds()) / 1e3
			}
			b.ReportMetric(medians["postgres-rc"], "pg-median-ms")
			b.ReportMetric(medians["sqlite"], "sqlite-median-ms")
			b.ReportMetric(medians["postgres-rc"]/medians["sqlite"], "pg/sqlite")
		})
	}
}
