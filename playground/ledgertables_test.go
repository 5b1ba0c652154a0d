package playground

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// One table list (tableOrder) feeds both dialects' allow-lists and the
// PostgreSQL role's grants: a learner's handler may write every ledger
// table on SQLite and on PostgreSQL alike. The PostgreSQL half needs
// IDEMLAB_TEST_DATABASE.
func TestLedgerTables_EachIsWritableOnBothDialects(t *testing.T) {
	var pg *PostgresLedgers
	ledgers := []string{"sqlite"}
	if os.Getenv("IDEMLAB_TEST_DATABASE") != "" {
		pg = testPostgresLedgers(t, 1)
		ledgers = append(ledgers, "postgres-rc")
	} else {
		t.Log("IDEMLAB_TEST_DATABASE is unset: the PostgreSQL half is skipped")
	}
	for _, table := range tableOrder {
		cols := tableColumns[table]
		vals := make([]string, len(cols))
		for i := range vals {
			vals[i] = "'97531'" // a text key and an integer alike, on both databases
		}
		src := fmt.Sprintf("@on credit\nINSERT INTO %s(%s) VALUES (%s);\n", table, strings.Join(cols, ", "), strings.Join(vals, ", "))
		for _, name := range ledgers {
			t.Run(table+"/"+name, func(t *testing.T) {
				lg, err := ParseLedger(name, pg)
				if err != nil {
					t.Fatal(err)
				}
				h, err := ParseHandlerFor("mine", src, lg)
				if err != nil {
					t.Fatalf("refused at parse time: %v", err)
				}
				tr, err := Run(context.Background(), Request{Scenario: "lost-ack", Script: "deliver msg-1", Custom: []*Handler{h}, Ledger: lg})
				if err != nil {
					t.Fatal(err)
				}
				var inserted bool
				for _, st := range tr.Handlers[0].Steps {
					if st.Kind == StepSQL && strings.HasPrefix(st.SQL, "INSERT") {
						if st.Error != "" {
							t.Fatalf("refused at run time: %s", st.Error)
						}
						inserted = st.RowsAffected != nil && *st.RowsAffected == 1
					}
				}
				if !inserted {
					t.Errorf("no row inserted into %s", table)
				}
			})
		}
	}
}
