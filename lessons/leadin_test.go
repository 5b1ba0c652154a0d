package lessons

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestLoad_ExerciseLeadInMustAgreeWithItsBounds: lint refuses a lead-in
// that promises what the exercise's card does not (six events against
// bounds of four, a crash the bounds leave out), on the paragraph's line,
// and accepts one that says what the bounds check.
func TestLoad_ExerciseLeadInMustAgreeWithItsBounds(t *testing.T) {
	head := "---\ntitle: A\nsummary: S.\norder: 1\nminutes: 1\nobjectives: [O.]\n---\n\n"
	for _, c := range []struct{ lead, want string }{
		{"**Check** tries every schedule of up to six events.", `lessons/01-a.md:9: exercise ex-a: the lead-in says "up to six events", but no set of the exercise's bounds has max_events 6 (bounds 4)`},
		{"**Check** tries a lost ack and a crash.", `lessons/01-a.md:9: exercise ex-a: the lead-in mentions "crash", but no set of the exercise's bounds has crashes`},
		{"**Check** tries every schedule of up to four events with a lost ack.", ""},
	} {
		lesson := head + c.lead + "\n\n```exercise\n" + minimalExercise + "```\n"
		_, err := Load(fstest.MapFS{"01-a.md": {Data: []byte(lesson)}}, Options{DisplayRoot: "lessons"})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.lead, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: %v, want %q", c.lead, err, c.want)
		}
	}
}
