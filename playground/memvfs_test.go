package playground

import (
	"bytes"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"
)

// A ledger's pages and WAL frames live in memory: its files keep the bytes
// they were created with while its connections commit, every connection
// (a new one included) reads what the others committed, and closing the
// ledger forgets the content with the files.
func TestLedgerVFS_TheFilesKeepTheirFirstBytes(t *testing.T) {
	l, tmpl := openScenarioLedger(t, "order-shipping")
	l.key = poolKey{tmpl, false}
	scribble(t, l, false, rand.New(rand.NewPCG(1, 2)))

	if onDisk, err := os.ReadFile(l.path); err != nil || !bytes.Equal(onDisk, tmpl.bytes) {
		t.Errorf("the ledger's file changed on disk (%d bytes, err %v); want the template's %d bytes", len(onDisk), err, len(tmpl.bytes))
	}
	if fi, err := os.Stat(l.path + "-wal"); err != nil || fi.Size() != 0 {
		t.Errorf("the WAL file on disk: %v, %v; want it empty", fi, err)
	}
	c, err := sqliteDriver.Open(fileURI(l.path))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readTables(c)
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, l.committed) {
		t.Errorf("a new connection reads\n%v\nthe ledger's mirror has\n%v", got, l.committed)
	}
	if reflect.DeepEqual(got, tmpl.rows) {
		t.Error("the scribbles committed nothing: the test proves nothing")
	}

	l.close()
	memFilesMu.Lock()
	defer memFilesMu.Unlock()
	for _, p := range []string{l.path, l.path + "-wal"} {
		if _, ok := memFiles[p]; ok {
			t.Errorf("%s: content kept after the ledger closed", p)
		}
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s: still on disk (%v)", p, err)
		}
	}
}

// openScenarioLedger opens a fresh ledger of scenario's template; the
// caller closes it.
func openScenarioLedger(t *testing.T, scenario string) (*ledger, *ledgerImage) {
	t.Helper()
	sc, _ := LookupScenario(scenario)
	tmpl, err := sc.template()
	if err != nil {
		t.Fatal(err)
	}
	l, err := openLedger(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	return l, tmpl
}
