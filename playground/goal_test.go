package playground

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestParseGoal_RejectsBadGoalsSayingWhere(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"", "the goal is empty"},
		{"increment", "clause 1 (\"increment\"): too short"},
		{"increment is great", `"great" is not a verdict`},
		{"increment is not", "want one verdict"},
		{"increment applies msg-1", "how many times"},
		{"increment applies msg-1 x times", `"x" is not a count`},
		{"increment applies msg-1 at least never", "how many times"},
		{"increment acc-1 over expected", "want \"HANDLER is VERDICT\""},
		{"increment is ok and", "clause 2 (\"\"): nothing before or after"},
		{"increment is ok and dedupe-tx is bad", "clause 2"},
		{strings.Repeat("x ", MaxGoalBytes), "the limit is"},
	} {
		_, err := ParseGoal(tc.text)
		var input *InputError
		if !errors.As(err, &input) || input.Field != "goal" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseGoal(%q) = %v, want an InputError on goal containing %q", tc.text, err, tc.want)
		}
	}
}

func TestParseGoal_RoundTrips(t *testing.T) {
	for _, text := range []string{
		"increment is duplicate-effect",
		"increment is not ok and dedupe-tx is ok",
		"check-then-insert applies msg-1 twice",
		"increment applies msg-1 at least 3 times",
		"increment applies msg-2 never",
		"increment acc-1 above expected and dedupe-tx acc-1 at expected",
	} {
		g, err := ParseGoal(text)
		if err != nil {
			t.Fatalf("ParseGoal(%q): %v", text, err)
		}
		if g.String() != text {
			t.Errorf("ParseGoal(%q).String() = %q", text, g.String())
		}
	}
}

func TestGoal_CheckRejectsNamesTheRunLacks(t *testing.T) {
	sc, err := LookupScenario("lost-ack")
	if err != nil {
		t.Fatal(err)
	}
	handlers := []string{"increment", "dedupe-tx"}
	for _, tc := range []struct{ text, want string }{
		{"naive is ok", `handler "naive" is not in this playground`},
		{"increment applies msg-9 twice", `no message "msg-9"`},
		{"increment acc-9 above expected", `no account or order "acc-9"`},
	} {
		g, err := ParseGoal(tc.text)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Check(sc, handlers); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%q) = %v, want %q", tc.text, err, tc.want)
		}
	}
}

// The engine decides: each goal is checked against a real run at a cursor.
func TestGoal_MetFollowsTheRunAtTheCursor(t *testing.T) {
	sc, err := LookupScenario("lost-ack")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Run(context.Background(), Request{Scenario: "lost-ack", Handlers: []string{"increment", "dedupe-tx"},
		Script: "deliver msg-1 lose-ack; redeliver msg-1 lose-ack; redeliver msg-1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		goal string
		at   int
		want bool
	}{
		{"increment applies msg-1 never", 0, true},
		{"increment applies msg-1 once", 1, true},
		{"increment applies msg-1 twice", 1, false},
		{"increment applies msg-1 twice", 2, true},
		{"increment applies msg-1 3 times", -1, true},
		{"increment applies msg-1 at least 2 times", -1, true},
		{"dedupe-tx applies msg-1 once", -1, true},
		{"increment is duplicate-effect and dedupe-tx is ok", -1, true},
		{"increment is duplicate-effect", 1, false},
		{"increment is not ok", 2, true},
		{"increment acc-1 above expected", -1, true},
		{"dedupe-tx acc-1 at expected", -1, true},
		{"dedupe-tx acc-1 below expected", -1, false},
	} {
		g, err := ParseGoal(tc.goal)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Met(tr, sc, tc.at); got != tc.want {
			t.Errorf("%q at %d: met = %v, want %v", tc.goal, tc.at, got, tc.want)
		}
	}
}

func FuzzParseGoal(f *testing.F) {
	for _, s := range []string{"increment is ok", "a applies m at least 3 times and b k below expected", "x is not pending", "and and"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		g, err := ParseGoal(text)
		if err != nil {
			var input *InputError
			if !errors.As(err, &input) || input.Field != "goal" {
				t.Fatalf("ParseGoal(%q): %v is not an InputError on goal", text, err)
			}
			return
		}
		again, err := ParseGoal(g.String())
		if err != nil || again.String() != g.String() {
			t.Fatalf("%q → %q does not round-trip: %v", text, g.String(), err)
		}
	})
}
