package playground

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseScript_RoundTrip(t *testing.T) {
	inputs := []string{
		"deliver msg-1 lose-ack; redeliver msg-1",
		"start msg-1 on A; start msg-1 on B; step A; step B; finish A; finish B",
		"deliver msg-1 crash-after 2; redeliver msg-1 to B",
		"deliver msg-1 to B crash-before-ack\npublish msg-1 to A lose-ack # the webhook retry\n\nstep A 3",
		"crash A; expire msg-1; restart B; replay; prune; prune older-than 0; prune older-than 24; advance 30",
		"  deliver   msg-1 ;;; # only a comment\n",
		"redrive pay-1; redrive pay-1 to B lose-ack",
	}
	for _, in := range inputs {
		s, err := ParseScript(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		printed := s.String()
		again, err := ParseScript(printed)
		if err != nil {
			t.Fatalf("%q printed as %q: %v", in, printed, err)
		}
		if !reflect.DeepEqual(s, again) {
			t.Errorf("%q → %q → %+v, want %+v", in, printed, again.Events, s.Events)
		}
		if again.String() != printed {
			t.Errorf("printing is not stable: %q then %q", printed, again.String())
		}
	}
}

func TestParseScript_Errors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"deliver", "event 1: deliver needs a message id"},
		{"deliver msg-1; step", "event 2: step needs a worker"},
		{"deliver msg-1 to", "event 1: to needs a worker"},
		{"deliver msg-1 explode", `event 1: unexpected "explode" after deliver msg-1`},
		{"deliver msg-1 crash-after", "event 1: crash-after needs a statement count"},
		{"deliver msg-1 crash-after 0", "event 1: crash-after needs a whole number from 1 to 100"},
		{"start msg-1 A", "event 1: start needs a message and a worker"},
		{"step A two", `event 1: step needs a whole number from 1 to 100, not "two"`},
		{"advance", "event 1: advance needs a tick count"},
		{"advance -3", "event 1: advance needs a whole number"},
		{"prune older 3", "event 1: prune takes an optional older-than T"},
		{"replay now", `event 1: unexpected "now" at the end of replay`},
		{"Deliver msg-1", `event 1: unknown event "Deliver"`},
		{"deliver msg/1", `event 1: message id "msg/1" may only contain`},
		{"deliver to", `event 1: message id "to" is a keyword`},
		{"finish A B", `event 1: unexpected "B" at the end of finish`},
		{"redrive", "event 1: redrive needs a message id, e.g. redrive msg-1"},
	}
	for _, tt := range tests {
		_, err := ParseScript(tt.in)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != "script" {
			t.Errorf("%q: error %v is not a script InputError", tt.in, err)
			continue
		}
		if !strings.Contains(ie.Msg, tt.want) {
			t.Errorf("%q: error %q does not contain %q", tt.in, ie.Msg, tt.want)
		}
	}
}

// The error names the line of the text the learner typed, so an editor can
// point at it: blank lines, comments and ';' separators count as typed.
func TestParseScript_ErrorNamesTheLine(t *testing.T) {
	tests := []struct {
		in   string
		line int
	}{
		{"delivr msg-1", 1},
		{"deliver msg-1\n\n# a comment\nredeliver", 4},
		{"deliver msg-1; deliver msg-2\nstep A; finish", 2},
	}
	for _, tt := range tests {
		_, err := ParseScript(tt.in)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Line != tt.line {
			t.Errorf("%q: error %v names line %d, want %d", tt.in, err, lineOf(ie), tt.line)
		}
	}
	_, err := ParseHandler("mine", "-- one\n\nUPDATE accounts SETT balance = 1;")
	var ie *InputError
	if !errors.As(err, &ie) || ie.Line != 3 {
		t.Errorf("handler error %v names line %d, want 3", err, lineOf(ie))
	}
}

func lineOf(ie *InputError) int {
	if ie == nil {
		return -1
	}
	return ie.Line
}

func TestParseHandler_Builtins(t *testing.T) {
	if len(Handlers()) != 25 {
		t.Fatalf("%d built-in handlers, want 25", len(Handlers()))
	}
	for _, h := range Handlers() {
		if h.Description == "" || h.Why == "" || h.Source == "" {
			t.Errorf("%s: description, why and source are required", h.Name)
		}
		again, err := ParseHandler(h.Name, h.Source)
		if err != nil || !reflect.DeepEqual(again, h) {
			t.Errorf("%s: reparsing the source differs (%v)", h.Name, err)
		}
	}
	// A scenario's handlers handle every kind of its messages (a handler
	// may leave out a kind no scenario it is compared in has: versioned-set
	// handles only price changes).
	for _, sc := range Scenarios() {
		for _, name := range sc.Handlers {
			for _, m := range sc.Messages {
				if _, ok := builtinHandlers[name].statementsFor(m.Kind); !ok {
					t.Errorf("%s: %s has no statements for kind %s", sc.Name, name, m.Kind)
				}
			}
		}
	}
	if _, err := LookupHandler("nope"); err == nil || !strings.Contains(err.Error(), "filter-dedupe") {
		t.Errorf("LookupHandler error does not list the names: %v", err)
	}
}

func TestParseHandler_Errors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"NoStatements", "@description nothing\n", "no SQL statements"},
		{"UnknownParam", "UPDATE accounts\nSET balance = balance + :amout\nWHERE id = :account_id;", "line 1: unknown parameter :amout"},
		{"QuestionMark", "UPDATE accounts SET balance = ? WHERE id = :account_id;", "line 1: unknown parameter ?"},
		{"NoSemicolon", "UPDATE accounts SET balance = 1", "line 1: the statement does not end with ';'"},
		{"TwoStatements", "UPDATE accounts SET balance = 1; DELETE FROM accounts;", "line 1: one statement per step"},
		{"Forbidden", "-- hi\nATTACH 'x' AS y;", "line 2: ATTACH is not allowed"},
		{"Pragma", "PRAGMA busy_timeout = 100;", "line 1: PRAGMA is not allowed"},
		{"SyntaxError", "\n\nUPDATE accounts SETT balance = 1;", "line 3: "},
		{"NoSuchTable", "DELETE FROM ledger;", "line 1: no such table: ledger"},
		{"GuardFirst", "@stop-if-no-rows\nUPDATE accounts SET balance = 1;", "line 1: @stop-if-no-rows must follow a statement"},
		{"GuardOnSelect", "SELECT 1 FROM accounts;\n@stop-if-no-rows", "line 2: @stop-if-no-rows must follow INSERT"},
		{"FoundOnUpdate", "UPDATE accounts SET balance = 1;\n@stop-if-found", "line 2: @stop-if-found must follow a SELECT"},
		{"OpenTx", "BEGIN;\nUPDATE accounts SET balance = 1;", "line 1: BEGIN without COMMIT or ROLLBACK"},
		{"CommitWithoutBegin", "UPDATE accounts SET balance = 1;\nCOMMIT;", "line 2: COMMIT without BEGIN"},
		{"NestedBegin", "BEGIN;\nBEGIN;\nCOMMIT;", "line 2: BEGIN inside a transaction"},
		{"BadKind", "@on refund\nSELECT 1;", "line 1: @on takes a message kind"},
		{"BadIdempotent", "@idempotent maybe\nSELECT 1;", "line 1: @idempotent takes yes or no"},
		{"UnknownDirective", "@retry 3\nSELECT 1;", "line 1: unknown directive @retry"},
		{"TwiceDescription", "@description a\n@description b\nSELECT 1;", "line 2: @description given twice (first on line 1)"},
		{"HugeValue", "UPDATE accounts SET id = zeroblob(1000000000);", "line 1: the function zeroblob is not allowed; functions are abs, avg,"},
		{"Recursive", "SELECT (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c);", "line 1: reading c is refused"},
		{"Unterminated", "UPDATE accounts SET id = 'x;", "line 1: unterminated string literal"},
		// SQLite splits statements: a quote in an identifier or a comment
		// does not hide a second statement from the engine.
		{"QuoteInIdentifierHidesNothing", `UPDATE accounts SET balance = 1 WHERE "it's" = 1; DELETE FROM accounts;`, "line 1: one statement per step"},
		{"QuoteInCommentHidesNothing", "UPDATE accounts SET balance = 1 /* it's */; DELETE FROM accounts;", "line 1: one statement per step"},
		{"QuoteInLineCommentHidesNothing", "UPDATE accounts SET balance = 1 -- it's\n; DELETE FROM accounts;", "line 1: one statement per step"},
		{"NUL", "UPDATE accounts SET balance = 1;\n\x00DELETE FROM accounts;", "line 2: a NUL byte"},
		{"JSONEach", "SELECT 1 FROM json_each('[1,2]');", "line 1: reading json_each is refused"},
		{"JSONTree", "SELECT count(*) FROM accounts, json_tree('[1]');", "line 1: reading json_tree is refused"},
		{"DBStat", "SELECT count(*) FROM dbstat;", "line 1: reading dbstat is refused"},
		{"DBPage", "SELECT 1 FROM sqlite_dbpage;", "line 1: reading sqlite_dbpage is refused"},
		{"PragmaTable", "SELECT 1 FROM pragma_table_info('accounts');", "line 1: reading pragma_table_info is refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseHandler("mine", tt.src)
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v is not an *InputError", err)
			}
			if !strings.HasPrefix(ie.Msg, "handler mine") || !strings.Contains(ie.Msg, tt.want) {
				t.Errorf("error %q does not contain %q", ie.Msg, tt.want)
			}
		})
	}
	if _, err := ParseHandler("Bad Name", "SELECT 1;"); err == nil {
		t.Error("a bad name is accepted")
	}
}

// TestParseHandler_SQLiteSplits: what SQLite reads as one statement is one
// step, whatever quotes and semicolons it holds.
func TestParseHandler_SQLiteSplits(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"SemicolonInString", "UPDATE accounts SET id = 'a;b' WHERE id = :account_id;", "UPDATE accounts SET id = 'a;b' WHERE id = :account_id"},
		{"SemicolonInStringAcrossLines", "UPDATE accounts SET id = 'a;\nb' WHERE id = :account_id;", "UPDATE accounts SET id = 'a;\nb' WHERE id = :account_id"},
		{"QuotedIdentifier", `SELECT "balance" FROM accounts WHERE id = :account_id;`, `SELECT "balance" FROM accounts WHERE id = :account_id`},
		{"TrailingComment", "UPDATE accounts SET balance = 1 WHERE id = :account_id; -- done", "UPDATE accounts SET balance = 1 WHERE id = :account_id"},
		{"ParamInStringIsText", "UPDATE accounts SET id = ':nope' WHERE id = :account_id;", "UPDATE accounts SET id = ':nope' WHERE id = :account_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ParseHandler("mine", tt.src)
			if err != nil {
				t.Fatal(err)
			}
			stmts, _ := h.statementsFor(KindCredit)
			if len(stmts) != 1 || stmts[0].SQL != tt.want {
				var got []string
				for _, st := range stmts {
					got = append(got, st.SQL)
				}
				t.Errorf("statements %q, want one: %q", got, tt.want)
			}
		})
	}
}

func FuzzParseScript(f *testing.F) {
	for _, sc := range Scenarios() {
		f.Add(sc.DefaultScript)
	}
	f.Add("prune older-than 0; advance 3 # x\nstep A 2")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseScript(in)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || !strings.HasPrefix(ie.Msg, "event ") && !strings.HasPrefix(ie.Msg, "the script is") {
				t.Fatalf("error %v: not an InputError naming the event", err)
			}
			return
		}
		again, err := ParseScript(s.String())
		if err != nil {
			t.Fatalf("printed form %q does not parse: %v", s.String(), err)
		}
		if !reflect.DeepEqual(s.Events, again.Events) && len(s.Events)+len(again.Events) > 0 {
			t.Fatalf("round trip changed %q into %q", in, s.String())
		}
	})
}

func FuzzParseHandler(f *testing.F) {
	for _, h := range Handlers() {
		f.Add(h.Source)
	}
	f.Add("SELECT 1 FROM processed_messages WHERE message_id = :message_id;\n@stop-if-found\n")
	f.Add(catchThenUpdate)
	f.Add("@retry-on busy\n" + lookupInTx)
	f.Add("@retry-on conflict, serialization_failure\n" + lookupInTx)
	f.Add("@retry-on busy busy\n" + lookupInTx)
	f.Fuzz(func(t *testing.T, src string) {
		h, err := ParseHandler("fuzz", src)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || !strings.HasPrefix(ie.Msg, "handler fuzz") {
				t.Fatalf("error %v is not an InputError naming the handler", err)
			}
			return
		}
		if len(h.Kinds()) == 0 {
			t.Fatal("a parsed handler has no sections")
		}
		// Whatever parses must also run, against two workers and a crash.
		_, err = Run(context.Background(), Request{Scenario: "concurrent-duplicate", Custom: []*Handler{h},
			Script: "start msg-1 on A; start msg-1 on B; step A; step B; step A 2; crash B; finish A; redeliver msg-1; prune older-than 0"})
		if err != nil {
			t.Fatalf("a parsed handler does not run: %v", err)
		}
	})
}

func TestScriptLines(t *testing.T) {
	tests := []struct{ in, want string }{
		{"deliver msg-1", "deliver msg-1"},
		{"deliver msg-1 lose-ack; redeliver msg-1", "deliver msg-1 lose-ack\nredeliver msg-1"},
		{"deliver msg-1;;  ; redeliver  msg-1;", "deliver msg-1\nredeliver msg-1"},
		{"deliver msg-1 # first\nredeliver msg-1", "deliver msg-1\n# first\nredeliver msg-1"},
		{"# only a comment", "# only a comment"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := ScriptLines(tt.in); got != tt.want {
			t.Errorf("ScriptLines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
