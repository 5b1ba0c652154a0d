package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"idemlab/internal/pgtest"
)

// idemlab lint -ledger-database proves the PostgreSQL blocks' claims on the
// server; without it, lint checks them against their recordings. A wrong
// claim fails both ways, naming PostgreSQL and the line.
func TestRun_LintProvesPostgresBlocks(t *testing.T) {
	url := pgtest.LedgerDatabase(t)
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"lint", "-ledger-database", url}, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), " OK") {
		t.Fatalf("lint on PostgreSQL: %v\n%s%s", err, stdout.String(), stderr.String())
	}

	dir := copyCourse(t)
	file := filepath.Join(dir, "06-check-then-insert-race.md")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	const rc = "ledger: postgres-rc\n"
	i := bytes.Index(src, []byte(rc))
	claim := []byte("dedupe-tx: ok}")
	j := bytes.Index(src[i:], claim)
	if i < 0 || j < 0 {
		t.Fatal("lesson 6 has no postgres-rc block with a dedupe-tx claim")
	}
	wrong := append(append(append([]byte{}, src[:i+j]...), "dedupe-tx: duplicate-effect}"...), src[i+j+len(claim):]...)
	if err := os.WriteFile(file, wrong, 0o644); err != nil {
		t.Fatal(err)
	}
	line := bytes.Count(src[:i+j], []byte("\n")) + 1
	for _, args := range [][]string{{"lint", dir}, {"lint", "-ledger-database", url, dir}} {
		stdout.Reset()
		err := run(context.Background(), args, &stdout, &stderr)
		want := "06-check-then-insert-race.md:" + strconv.Itoa(line) + ": expect: lesson claims dedupe-tx: duplicate-effect but PostgreSQL (postgres-rc) shows ok"
		if err == nil || !strings.Contains(stdout.String(), want) {
			t.Errorf("%v: %v\n%s\nwant %q", args[:len(args)-1], err, stdout.String(), want)
		}
	}
}
