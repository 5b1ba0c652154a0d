package playground

import (
	"context"
	"os"
	"testing"
)

func TestZZCE(t *testing.T) {
	ex := exerciseByID(t, os.Getenv("EX"))
	src := ex.Solution
	if f := os.Getenv("SRC"); f != "" {
		b, _ := os.ReadFile(f)
		src = string(b)
	}
	res, err := Check(context.Background(), ex, src)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("passed %v states %d runs %d err %+v", res.Passed, res.DistinctStates, res.Runs, res.Error)
	if ce := res.Counterexample; ce != nil {
		t.Logf("%s | %s | %s\n%s", ce.Invariant, ce.Script, ce.Violation, ce.Story)
	}
}
