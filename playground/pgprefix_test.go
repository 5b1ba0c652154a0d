package playground

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"idemlab/internal/pgtest"
)

// ledgerObjects lists the schemas and roles whose names start with prefix+"_".
func ledgerObjects(t *testing.T, url, prefix string) []string {
	t.Helper()
	c, err := pgconn.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	res, err := c.Exec(context.Background(), "SELECT 'role '||rolname FROM pg_roles WHERE rolname LIKE '"+prefix+"\\_%' UNION SELECT 'schema '||nspname FROM pg_namespace WHERE nspname LIKE '"+prefix+"\\_%' ORDER BY 1").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, row := range res[0].Rows {
		out = append(out, string(row[0]))
	}
	return out
}

// crash leaves the pool as a killed process would: every session gone,
// nothing dropped.
func (p *PostgresLedgers) crash() {
	p.cleaning.Wait()
	for _, pl := range p.all {
		pl.closeSessions()
	}
	p.owner.Close(context.Background())
	p.all = nil
}

// Two servers share one database, each with its prefix: both run, neither
// start touches the other's ledgers; a prefix a live server holds is
// refused; a restart with the prefix of a dead server drops what it left
// (more ledgers than the new pool has, too) and nothing of the other's.
func TestPostgresLedgers_TwoPrefixesShareOneDatabase(t *testing.T) {
	url := pgtest.LedgerDatabase(t)
	var b [4]byte
	rand.Read(b[:])
	one, two := "test_one_"+hex.EncodeToString(b[:]), "test_two_"+hex.EncodeToString(b[:])
	ctx := context.Background()
	first, err := OpenPostgresLedgers(ctx, url, 3, one)
	if err != nil {
		t.Fatal(err)
	}
	second, err := OpenPostgresLedgers(ctx, url, 2, two)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { second.Close() })
	const race = "start msg-1 on A; start msg-1 on B; step A; step B; step A; step B; finish A; finish B"
	for _, pg := range []*PostgresLedgers{first, second} {
		if tr := runOnPostgres(t, pg, "postgres-rc", "concurrent-duplicate", "dedupe-tx", "", race); tr.Handlers[0].Verdict != VerdictOK {
			t.Errorf("dedupe-tx on %s: %s", pg.prefix, tr.Handlers[0].Verdict)
		}
	}

	if _, err := OpenPostgresLedgers(ctx, url, 1, one); err == nil || !strings.Contains(err.Error(), "in use by another live server") {
		t.Fatalf("a second pool on a live server's prefix: %v, want refused", err)
	}
	if got := ledgerObjects(t, url, one); len(got) != 6 {
		t.Fatalf("the refused start touched the live pool: %v", got)
	}

	first.crash()
	restarted, err := OpenPostgresLedgers(ctx, url, 1, one)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ledgerObjects(t, url, one), []string{"role " + one + "_1", "schema " + one + "_1"}; !slices.Equal(got, want) {
		t.Errorf("after the restart: %v, want %v (the dead pool's _2 and _3 dropped)", got, want)
	}
	if got := ledgerObjects(t, url, two); len(got) != 4 {
		t.Errorf("the other server's ledgers after the restart: %v, want its 2 schemas and 2 roles", got)
	}
	if tr := runOnPostgres(t, second, "postgres-serializable", "concurrent-duplicate", "dedupe-tx", "", race); tr.Handlers[0].Verdict != VerdictOK {
		t.Errorf("the other server after the restart: %s", tr.Handlers[0].Verdict)
	}
	if tr := runOnPostgres(t, restarted, "postgres-rc", "concurrent-duplicate", "dedupe-tx", "", race); tr.Handlers[0].Verdict != VerdictOK {
		t.Errorf("the restarted server: %s", tr.Handlers[0].Verdict)
	}
	if err := restarted.Close(); err != nil {
		t.Fatal(err)
	}
	if got := ledgerObjects(t, url, one); len(got) != 0 {
		t.Errorf("after Close: %v left", got)
	}
}
