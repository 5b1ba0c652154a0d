package playground

import (
	"context"
	"database/sql/driver"
	"testing"
)

// benchRequest is a scenario's default script with its first two handlers.
func benchRequest(sc *Scenario) Request {
	return Request{Scenario: sc.Name, Handlers: sc.Handlers[:2]}
}

// BenchmarkRun measures a whole run: ledgers, workers, scheduler, hooks,
// frames and verdicts.
func BenchmarkRun(b *testing.B) {
	ctx := context.Background()
	for _, sc := range Scenarios() {
		b.Run(sc.Name, func(b *testing.B) {
			req := benchRequest(sc)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Run(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBaseline executes the same SQL statements the run executed, with
// the same bound values, directly on one connection per handler, each on a
// fresh ledger restored from the same template: the floor the engine's
// bookkeeping is measured against.
func BenchmarkBaseline(b *testing.B) {
	ctx := context.Background()
	for _, sc := range Scenarios() {
		b.Run(sc.Name, func(b *testing.B) {
			tr, err := Run(ctx, benchRequest(sc))
			if err != nil {
				b.Fatal(err)
			}
			type stmt struct {
				sql   string
				args  []driver.NamedValue
				query bool
			}
			var perHandler [][]stmt
			for _, ht := range tr.Handlers {
				var stmts []stmt
				for _, st := range ht.Steps {
					if st.SQL == "" || st.Kind == StepBlocked {
						continue
					}
					var args []driver.NamedValue
					for i, a := range st.Args {
						args = append(args, driver.NamedValue{Name: a.Name, Ordinal: i + 1, Value: a.Value})
					}
					stmts = append(stmts, stmt{st.SQL, args, st.RowsFound != nil})
				}
				perHandler = append(perHandler, stmts)
			}
			tmpl, err := sc.template()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				for _, stmts := range perHandler {
					l, err := openLedger(tmpl)
					if err != nil {
						b.Fatal(err)
					}
					c := l.pinned.conn
					for _, st := range stmts {
						if st.query {
							rows, err := c.(driver.QueryerContext).QueryContext(ctx, st.sql, st.args)
							if err == nil {
								dest := make([]driver.Value, len(rows.Columns()))
								for rows.Next(dest) == nil {
								}
								rows.Close()
							}
						} else {
							c.(driver.ExecerContext).ExecContext(ctx, st.sql, st.args)
						}
					}
					l.close()
				}
			}
		})
	}
}
