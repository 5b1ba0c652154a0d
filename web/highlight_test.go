package web

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"idemlab/web/exercise"
)

// A handler's directive lines (@description, @why, @idempotent, @on) are
// prose and names: the highlighter colours no English word in them as an
// SQL keyword, and still colours the SQL below them.
func TestHighlightHandler_DirectivesAreNotSQL(t *testing.T) {
	v := testView(t)
	// An exercise's solution with the words the issue saw coloured.
	credit := *builtinExercise(t, "dedupe-credit")
	credit.Solution = "@description Records the id and applies the effect in one transaction.\n@idempotent yes\n" +
		"@why The id row and the effect commit or roll back together, not one without the other.\n" + credit.Solution
	for _, tc := range []struct {
		id    string
		block func() *goquery.Document
		pre   string
	}{
		{"break-message-id", func() *goquery.Document {
			return render(t, exercise.InverseBlock(v, exercise.StartExercise(builtinExercise(t, "break-message-id"), false)))
		}, testID("inverse-handler") + " pre"},
		{"break-shipping", func() *goquery.Document {
			return render(t, exercise.InverseBlock(v, exercise.StartExercise(builtinExercise(t, "break-shipping"), false)))
		}, testID("inverse-handler") + " pre"},
		{"dedupe-credit's solution", func() *goquery.Document {
			return render(t, exercise.ExerciseBlock(v, exercise.StartExercise(&credit, false)))
		}, testID("exercise-solution") + " pre"},
	} {
		id := tc.id
		lines := tc.block().Find(tc.pre + " .line")
		if lines.Length() == 0 {
			t.Fatalf("%s: no highlighted lines", id)
		}
		directives, sqlKeywords := 0, 0
		lines.Each(func(_ int, line *goquery.Selection) {
			text := strings.TrimSpace(line.Find(".cl").Text())
			keywords := line.Find(`.cl [class^="k"], .cl .nb`).Length()
			if strings.HasPrefix(text, "@") {
				directives++
				if keywords > 0 {
					t.Errorf("%s: directive line %q has %d SQL keyword spans", id, text, keywords)
				}
				if line.Find(".cl .nd").Length() != 1 {
					t.Errorf("%s: directive line %q does not mark its @name", id, text)
				}
			}
			sqlKeywords += keywords
		})
		if directives == 0 || sqlKeywords == 0 {
			t.Errorf("%s: %d directive lines, %d SQL keywords: want both", id, directives, sqlKeywords)
		}
	}
}
