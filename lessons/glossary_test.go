package lessons

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// glossarySortKey is the key the glossary is ordered by: the term in lower
// case with everything but letters and digits dropped, so that "Inbox" comes
// before "In-process filter" and "At-least-once" before "At-most-once", as a
// reader scanning for a word expects.
func glossarySortKey(term string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, term)
}

// glossaryTerms returns the glossary's terms (its level-3 headings) in
// document order, with the anchor id of each.
func glossaryTerms(t *testing.T) (terms []Heading) {
	t.Helper()
	course, err := Load(Embedded(), Options{DisplayRoot: "lessons"})
	if err != nil {
		t.Fatalf("Load(Embedded()):\n%v", err)
	}
	g := course.Lesson("glossary")
	if g == nil {
		t.Fatal("the built-in course has no glossary")
	}
	for _, h := range g.TOC {
		if h.Level == 3 {
			terms = append(terms, h)
		}
	}
	if len(terms) == 0 {
		t.Fatal("the glossary has no terms (### headings)")
	}
	return terms
}

// TestGlossary_Sorted keeps the glossary in alphabetical order, which is the
// order its first line promises.
func TestGlossary_Sorted(t *testing.T) {
	terms := glossaryTerms(t)
	for i := 1; i < len(terms); i++ {
		prev, cur := terms[i-1], terms[i]
		if glossarySortKey(prev.Text) >= glossarySortKey(cur.Text) {
			t.Errorf("glossary: %q comes after %q; keep the terms in alphabetical order (ignoring case, spaces and dashes)", cur.Text, prev.Text)
		}
	}
}

// glossaryLink matches a link into the glossary from a lesson
// ("glossary.md#ack") or from the glossary itself ("(#ack)").
var (
	glossaryLink = regexp.MustCompile(`\(glossary\.md#([^)\s]+)\)`)
	selfLink     = regexp.MustCompile(`\]\(#([^)\s]+)\)`)
)

// TestGlossary_EveryLinkedTermExists checks that every term a lesson links
// to has its entry, so that a renamed or forgotten term is caught here with
// the lesson that needs it named, not by a reader who follows a dead link.
func TestGlossary_EveryLinkedTermExists(t *testing.T) {
	ids := map[string]bool{}
	for _, h := range glossaryTerms(t) {
		ids[h.ID] = true
	}
	files, err := fs.Glob(Embedded(), "*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no lesson files: %v", err)
	}
	linked := 0
	for _, f := range files {
		src, err := fs.ReadFile(Embedded(), f)
		if err != nil {
			t.Fatal(err)
		}
		pattern := glossaryLink
		if f == "glossary.md" {
			pattern = selfLink
		}
		for n, line := range strings.Split(string(src), "\n") {
			for _, m := range pattern.FindAllStringSubmatch(line, -1) {
				linked++
				if !ids[m[1]] {
					t.Errorf("lessons/%s:%d links to the glossary term #%s, which the glossary does not define", f, n+1, m[1])
				}
			}
		}
	}
	if linked == 0 {
		t.Error("no lesson links to the glossary; is the link pattern still right?")
	}
}

func TestGlossarySortKey(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{"Ack", "At-least-once delivery"},
		{"At-least-once delivery", "At-most-once delivery"},
		{"Idempotency key", "Idempotent"},
		{"Inbox", "In-process filter"},
		{"Offset", "Ordering key"},
	} {
		if glossarySortKey(c.a) >= glossarySortKey(c.b) {
			t.Errorf("glossarySortKey: %q should sort before %q", c.a, c.b)
		}
	}
}
