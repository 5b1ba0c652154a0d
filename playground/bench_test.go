package playground

import (
	"context"
	"database/sql/driver"
	"runtime"
	"testing"
	"time"
)

// benchRequest is a scenario's default script with its first two handlers.
func benchRequest(sc *Scenario) Request {
	return Request{Scenario: sc.Name, Handlers: sc.Handlers[:min(2, len(sc.Handlers))]} // the outage scenarios compare one
}

// BenchmarkRun measures a whole run: ledgers, workers, scheduler, hooks,
// frames and verdicts; on fresh ledgers (the pool off) and on reused ones
// (pool.go), in the same run. cpu-ns/op is the thread's CPU time.
func BenchmarkRun(b *testing.B) {
	ctx := context.Background()
	for _, sc := range Scenarios() {
		for _, kind := range []string{"fresh", "reused"} {
			b.Run(sc.Name+"/"+kind, func(b *testing.B) {
				poolOff.Store(kind == "fresh")
				defer poolOff.Store(false)
				req := benchRequest(sc)
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu0, ok := threadCPU()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Run(ctx, req); err != nil {
						b.Fatal(err)
					}
				}
				if cpu1, ok1 := threadCPU(); ok && ok1 {
					b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}

// baselineStatement is one statement a run executed, with its bound values.
type baselineStatement struct {
	sql   string
	args  []driver.NamedValue
	query bool
}

// baselineFor records the SQL a run of req executed, per handler.
func baselineFor(b *testing.B, req Request) (*ledgerImage, [][]baselineStatement) {
	tr, err := Run(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	var perHandler [][]baselineStatement
	for _, ht := range tr.Handlers {
		var stmts []baselineStatement
		for _, st := range ht.Steps {
			if st.SQL == "" || st.Kind == StepProvider || st.Kind == StepEmail {
				continue // blocked attempts are kept: SQLite did run them; calls outside the database did not reach it
			}
			var args []driver.NamedValue
			for i, a := range st.Args {
				args = append(args, driver.NamedValue{Name: a.Name, Ordinal: i + 1, Value: a.Value})
			}
			stmts = append(stmts, baselineStatement{st.SQL, args, st.RowsFound != nil})
		}
		perHandler = append(perHandler, stmts)
	}
	sc, _ := LookupScenario(req.Scenario)
	tmpl, err := sc.template()
	if err != nil {
		b.Fatal(err)
	}
	return tmpl, perHandler
}

// runBaseline executes the recorded statements directly on one connection
// per handler, each on a ledger of the template from the pool the engine
// uses (pool.go), its statements prepared once on that connection as the
// engine's plain connections keep them: the floor is SQLite's own work.
func runBaseline(b *testing.B, tmpl *ledgerImage, perHandler [][]baselineStatement) {
	ctx := context.Background()
	for _, stmts := range perHandler {
		l, err := acquireLedger(tmpl, false) // plain connections, as the built-in handlers run on
		if err != nil {
			b.Fatal(err)
		}
		c, err := l.conn("baseline")
		if err != nil {
			b.Fatal(err)
		}
		for _, st := range stmts {
			stmt := c.prepared(st.sql)
			if stmt == nil {
				b.Fatalf("%s does not prepare", st.sql)
			}
			if st.query {
				rows, err := stmt.(driver.StmtQueryContext).QueryContext(ctx, st.args)
				if err == nil {
					dest := make([]driver.Value, len(rows.Columns()))
					for rows.Next(dest) == nil {
					}
					rows.Close()
				}
			} else {
				stmt.(driver.StmtExecContext).ExecContext(ctx, st.args)
			}
		}
		releaseLedger(l, true)
	}
}

// BenchmarkBaseline executes the same SQL statements the run executed (those
// that came back SQLITE_BUSY included), with
// the same bound values, directly on one connection per handler, each on a
// ledger of the same template from the same pool (with the same connection
// settings): the floor the engine's bookkeeping is measured against.
func BenchmarkBaseline(b *testing.B) {
	for _, sc := range Scenarios() {
		b.Run(sc.Name, func(b *testing.B) {
			tmpl, stmts := baselineFor(b, benchRequest(sc))
			b.ReportAllocs()
			for b.Loop() {
				runBaseline(b, tmpl, stmts)
			}
		})
	}
}

// BenchmarkRatio alternates a run and its baseline in one loop, so that a
// machine whose load drifts (other processes) skews both alike, and reports
// each one's time and their ratio: wall time, and on Linux the CPU time of
// the benchmark's thread (which other processes cannot inflate).
func BenchmarkRatio(b *testing.B) {
	ctx := context.Background()
	for _, sc := range Scenarios() {
		b.Run(sc.Name, func(b *testing.B) {
			req := benchRequest(sc)
			tmpl, stmts := baselineFor(b, req)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var engine, floor time.Duration
			var engineCPU, floorCPU int64
			for b.Loop() {
				t0 := time.Now()
				c0, _ := threadCPU()
				if _, err := Run(ctx, req); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				c1, _ := threadCPU()
				runBaseline(b, tmpl, stmts)
				c2, cpuOK := threadCPU()
				engine += t1.Sub(t0)
				floor += time.Since(t1)
				if cpuOK {
					engineCPU += c1 - c0
					floorCPU += c2 - c1
				}
			}
			b.ReportMetric(float64(engine.Nanoseconds())/float64(b.N), "run-ns/op")
			b.ReportMetric(float64(floor.Nanoseconds())/float64(b.N), "baseline-ns/op")
			b.ReportMetric(float64(engine)/float64(floor), "ratio")
			if floorCPU > 0 {
				b.ReportMetric(float64(engineCPU)/float64(b.N), "run-cpu-ns/op")
				b.ReportMetric(float64(floorCPU)/float64(b.N), "baseline-cpu-ns/op")
				b.ReportMetric(float64(engineCPU)/float64(floorCPU), "cpu-ratio")
			}
		})
	}
}
