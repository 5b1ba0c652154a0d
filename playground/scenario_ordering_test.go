package playground

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// addOrderingVerdicts adds to TestRun_Verdicts' table the default script
// of stale-price against every built-in handler, and versioned-set against
// every other scenario: it handles only price changes, so a credit or a
// ship message is acked with no effect.
func addOrderingVerdicts(want map[string]map[string]string) {
	for name, row := range want {
		if name != "never-paid" && name != "order-shipping" && row != nil {
			row["versioned-set"] = VerdictLost
		}
	}
	want["order-shipping"]["versioned-set"] = VerdictLost
	want["never-paid"]["versioned-set"] = VerdictLost
	want["stale-price"] = map[string]string{"versioned-set": VerdictOK}
	for _, h := range builtinOrder {
		if h != "versioned-set" {
			// set-value and dedupe-tx let the stale version 2 overwrite
			// version 3; conditional (version = :version - 1) and the
			// handlers without a price section never apply version 3.
			want["stale-price"][h] = VerdictLost
		}
	}
}

// TestStalePrice_Verdicts: only the versioned set ends at the highest
// version's price, in every order of arrival and with every duplicate, and
// the verdict names the message a stale write overwrote.
func TestStalePrice_Verdicts(t *testing.T) {
	const (
		ok      = VerdictOK
		lost    = VerdictLost
		pending = VerdictPending
	)
	tests := []struct {
		script   string
		verdicts map[string]string // set-value, dedupe-tx, conditional, versioned-set
		detail   map[string]string // the first violation's detail, per handler
	}{
		{"deliver msg-2; deliver msg-1",
			map[string]string{"set-value": lost, "dedupe-tx": lost, "conditional": lost, "versioned-set": ok},
			map[string]string{
				"set-value":   "msg-2, version 3, was overwritten by the stale msg-1, version 2: sku-1's price is 1000, expected 1200",
				"dedupe-tx":   "msg-2, version 3, was overwritten by the stale msg-1, version 2: sku-1's price is 1000, expected 1200",
				"conditional": "msg-2 was acked but never applied",
			}},
		// In publish order every handler is right: order is what they lack.
		{"deliver msg-1; deliver msg-2",
			map[string]string{"set-value": ok, "dedupe-tx": ok, "conditional": ok, "versioned-set": ok}, nil},
		// A late copy of the older change: the dedupe table knows its id.
		{"deliver msg-1; deliver msg-2; publish msg-1",
			map[string]string{"set-value": lost, "dedupe-tx": ok, "conditional": ok, "versioned-set": ok},
			map[string]string{"set-value": "msg-2, version 3, was overwritten by the stale msg-1, version 2: sku-1's price is 1000, expected 1200"}},
		// The newest change redelivered after the stale one puts it right,
		// except where the dedupe table skips the redelivery.
		{"deliver msg-2 lose-ack; deliver msg-1; redeliver msg-2",
			map[string]string{"set-value": ok, "dedupe-tx": lost, "conditional": ok, "versioned-set": ok}, nil},
		// Still owed by the broker: pending, not diverged.
		{"deliver msg-2 lose-ack; deliver msg-1",
			map[string]string{"set-value": pending, "dedupe-tx": pending, "conditional": pending, "versioned-set": pending}, nil},
		// Version 3 alone: conditional waits for a version 2 that never comes.
		{"deliver msg-2",
			map[string]string{"set-value": ok, "dedupe-tx": ok, "conditional": lost, "versioned-set": ok}, nil},
		{"deliver msg-2; redeliver msg-2; deliver msg-1; publish msg-1",
			map[string]string{"set-value": lost, "dedupe-tx": lost, "conditional": lost, "versioned-set": ok}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			tr, err := Run(context.Background(), Request{Scenario: "stale-price", Script: tt.script,
				Handlers: []string{"set-value", "dedupe-tx", "conditional", "versioned-set"}})
			if err != nil {
				t.Fatal(err)
			}
			for _, ht := range tr.Handlers {
				if ht.Verdict != tt.verdicts[ht.Name] {
					t.Errorf("%s: verdict %s, want %s (%+v)", ht.Name, ht.Verdict, tt.verdicts[ht.Name], ht.Violations)
				}
				if want, ok := tt.detail[ht.Name]; ok && (len(ht.Violations) == 0 || ht.Violations[0].Detail != want || ht.Violations[0].MessageID != "msg-2") {
					t.Errorf("%s: violations %+v, want msg-2: %q", ht.Name, ht.Violations, want)
				}
				if ht.Verdict == ok && ht.Actual[0].Value != ht.Expected[0].Value {
					t.Errorf("%s: ok with price %d, expected %d", ht.Name, ht.Actual[0].Value, ht.Expected[0].Value)
				}
			}
		})
	}
}

// TestStalePrice_ExpectedIsHighestVersion: the expected price is the
// highest delivered version's, whatever the order of arrival.
func TestStalePrice_ExpectedIsHighestVersion(t *testing.T) {
	for script, want := range map[string]int64{
		"deliver msg-1":                        1000,
		"deliver msg-2":                        1200,
		"deliver msg-2; deliver msg-1":         1200,
		"deliver msg-1; deliver msg-2":         1200,
		"deliver msg-1 lose-ack; expire msg-1": 1000,
	} {
		tr, err := Run(context.Background(), Request{Scenario: "stale-price", Script: script, Handlers: []string{"versioned-set"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.Handlers[0].Expected; len(got) != 1 || got[0] != (Figure{Table: "prices", Key: "sku-1", Value: want}) {
			t.Errorf("%s: expected %v, want sku-1=%d", script, got, want)
		}
	}
}

// TestStalePrice_GoldenAllHandlers pins the verdict table of the four
// handlers lesson 13 compares (the default golden has three).
func TestStalePrice_GoldenAllHandlers(t *testing.T) {
	tr, err := Run(context.Background(), Request{Scenario: "stale-price", Handlers: []string{"set-value", "dedupe-tx", "conditional", "versioned-set"}})
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := tr.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "stale-price.four-handlers.txt"), table.Bytes())
}

// TestStoryTables_HiddenWhileEmpty: a scenario without prices has no
// prices table in its ledger; stale-price has one.
func TestStoryTables_HiddenWhileEmpty(t *testing.T) {
	for _, sc := range Scenarios() {
		has := false
		for _, tb := range sc.InitialLedger() {
			has = has || tb.Table == "prices"
		}
		if has != (len(sc.Prices) > 0) {
			t.Errorf("%s: prices table shown = %v with %d prices", sc.Name, has, len(sc.Prices))
		}
	}
	if !strings.Contains(schemaSQL, "CREATE TABLE prices(") {
		t.Error("the schema has no prices table")
	}
}

// TestPostgresLedger_StalePriceVerdictsMatchSQLite: the stale-price story
// on real PostgreSQL at every isolation level gives the verdicts it gives
// on SQLite: the versioned set keeps the newest price, the plain set and
// the dedupe table write the stale one, and the same per-message detail.
func TestPostgresLedger_StalePriceVerdictsMatchSQLite(t *testing.T) {
	pg := testPostgresLedgers(t, 2)
	const script = "deliver msg-2; deliver msg-1; publish msg-1"
	for _, handler := range []string{"set-value", "dedupe-tx", "conditional", "versioned-set"} {
		lite, err := Run(context.Background(), Request{Scenario: "stale-price", Script: script, Handlers: []string{handler}})
		if err != nil {
			t.Fatal(err)
		}
		for _, ledger := range []string{"postgres-rc", "postgres-rr", "postgres-serializable"} {
			got := runOnPostgres(t, pg, ledger, "stale-price", handler, "", script).Handlers[0]
			want := lite.Handlers[0]
			if got.Verdict != want.Verdict || fmt.Sprint(got.Actual) != fmt.Sprint(want.Actual) || fmt.Sprint(got.Violations) != fmt.Sprint(want.Violations) {
				t.Errorf("%s on %s: %s %v %+v; SQLite: %s %v %+v", handler, ledger, got.Verdict, got.Actual, got.Violations, want.Verdict, want.Actual, want.Violations)
			}
		}
	}
}
