package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"idemlab/internal/pgtest"
	"idemlab/playground"
	"idemlab/workshop/pgstore"
)

// Where ledgers live: -ledger-database, or the workshop store's -database
// with -ledgers-in-workshop-database (flags or environment), never both;
// the prefix is the flag's, else a random one per process.
func TestParseServeConfig_LedgerFlags(t *testing.T) {
	const store, other = "postgres://idemlab@db.example/workshop", "postgres://idemlab@pg.example/ledgers"
	for _, tc := range []struct {
		name     string
		args     []string
		env      map[string]string
		database string // want, when no error
		prefix   string // want; "random" for idemlab_ and 8 hex digits
		err      string // want an error saying this
	}{
		{"SQLite only", nil, nil, "", "", ""},
		{"own server", []string{"-ledger-database", other}, nil, other, "random", ""},
		{"own server and prefix", []string{"-ledger-database", other, "-ledger-prefix", "eu_1"}, nil, other, "eu_1", ""},
		{"in the workshop's", []string{"-database", store, "-ledgers-in-workshop-database"}, nil, store, "random", ""},
		{"in the workshop's, from the environment", nil, map[string]string{"IDEMLAB_DATABASE": store, "IDEMLAB_LEDGERS_IN_WORKSHOP_DATABASE": "1", "IDEMLAB_LEDGER_PREFIX": "room_a"}, store, "room_a", ""},
		{"in a SQLite workshop store", []string{"-ledgers-in-workshop-database"}, nil, "", "", "needs a PostgreSQL workshop store (-database postgres://…)"},
		{"both", []string{"-database", store, "-ledgers-in-workshop-database", "-ledger-database", other}, nil, "", "", "both say where ledgers live; give one"},
		{"both, one from the environment", []string{"-database", store, "-ledgers-in-workshop-database"}, map[string]string{"IDEMLAB_LEDGER_DATABASE": other}, "", "", "IDEMLAB_LEDGER_DATABASE"},
		{"a prefix without ledgers", []string{"-ledger-prefix", "eu_1"}, nil, "", "", "-ledger-prefix names PostgreSQL ledgers, and there are none"},
		{"a bad prefix", []string{"-ledger-database", other, "-ledger-prefix", "1eu"}, nil, "", "", "not starting with a digit"},
		{"a pool of 0", []string{"-ledger-database", other, "-ledger-pool", "0"}, nil, "", "", "-ledger-pool 0: want 1 to 64"},
		{"a pool too large, from the environment", []string{"-ledger-database", other}, map[string]string{"IDEMLAB_LEDGER_POOL": "65"}, "", "", "-ledger-pool 65"},
		{"a pool that is no number", []string{"-ledger-database", other}, map[string]string{"IDEMLAB_LEDGER_POOL": "many"}, "", "", `IDEMLAB_LEDGER_POOL="many": want a number`},
		{"a prefix with a quote", []string{"-ledger-database", other, "-ledger-prefix", "a';DROP"}, nil, "", "", "letters, digits and '_'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseServeConfig(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
			if tc.err != "" {
				var ue *usageError
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &ue) {
					t.Fatalf("err = %v, want a usage error saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Ledgers.Database != tc.database {
				t.Errorf("ledgers on %q, want %q", cfg.Ledgers.Database, tc.database)
			}
			if got := cfg.Ledgers.Prefix; tc.prefix == "random" && (len(got) != len("idemlab_")+8 || !strings.HasPrefix(got, "idemlab_")) || tc.prefix != "random" && got != tc.prefix {
				t.Errorf("prefix %q, want %s", got, tc.prefix)
			}
		})
	}
	if cfg, err := parseServeConfig([]string{"-ledger-database", other}, func(k string) string { return map[string]string{"IDEMLAB_LEDGER_POOL": "8"}[k] }, io.Discard); err != nil || cfg.Ledgers.Pool != 8 {
		t.Errorf("IDEMLAB_LEDGER_POOL=8: pool %d, %v", cfg.Ledgers.Pool, err)
	}
	a, _ := parseServeConfig([]string{"-ledger-database", other}, func(string) string { return "" }, io.Discard)
	b, _ := parseServeConfig([]string{"-ledger-database", other}, func(string) string { return "" }, io.Discard)
	if a.Ledgers.Prefix == b.Ledgers.Prefix {
		t.Errorf("two processes would share the prefix %q", a.Ledgers.Prefix)
	}
}

// With -ledgers-in-workshop-database, ledgers live beside the workshop
// store's tables, and a ledger's role is refused on every one of them
// (42501: permission denied for the table), as it is on creating a table
// there (for the schema).
func TestServeLedgers_InTheWorkshopDatabaseCannotReadTheStore(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	store, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var b [4]byte
	rand.Read(b[:])
	prefix := "test_ws_" + hex.EncodeToString(b[:])
	cfg, err := parseServeConfig([]string{"-database", url, "-ledgers-in-workshop-database", "-ledger-prefix", prefix}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ledgers, err := openServeLedgers(ctx, cfg.Ledgers)
	if err != nil {
		t.Fatal(err)
	}
	defer ledgers.Close()
	lg, err := playground.ParseLedger("postgres-rc", ledgers)
	if err != nil {
		t.Fatal(err)
	}
	if tr, err := playground.Run(ctx, playground.Request{Scenario: "lost-ack", Handlers: []string{"dedupe-tx"}, Ledger: lg}); err != nil || tr.Ledger != "postgres-rc" {
		t.Fatalf("a run on the workshop's database: %v", err)
	}

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT table_schema||'.'||table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) < 3 {
		t.Fatalf("the store's tables: %v", tables)
	}
	// Like the public schema's default, every role may look up names in
	// the store's schema: what refuses a ledger's role is the tables'
	// privileges, not the schema's.
	schema, _, _ := strings.Cut(tables[0], ".")
	if _, err := conn.Exec(ctx, "GRANT USAGE ON SCHEMA "+schema+" TO PUBLIC; SET ROLE "+prefix+"_1"); err != nil {
		t.Fatal(err)
	}
	for _, q := range append(tablesQueries(tables), "CREATE TABLE "+schema+".ledger_was_here (x int)") {
		_, err := conn.Exec(ctx, q)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "42501" || strings.Contains(pe.Message, "for schema") != strings.HasPrefix(q, "CREATE") {
			t.Errorf("as the ledger's role, %s: %v, want 42501 (insufficient privilege)", q, err)
		}
	}
}

// tablesQueries reads and writes each table.
func tablesQueries(tables []string) []string {
	var out []string
	for _, tb := range tables {
		out = append(out, "SELECT count(*) FROM "+tb, "DELETE FROM "+tb)
	}
	return out
}
