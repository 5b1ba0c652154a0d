package lessons

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEmbedded_LoadsValidatesAndRenders(t *testing.T) {
	course, err := Load(Embedded(), Options{RequireSources: true})
	if err != nil {
		t.Fatalf("Load(Embedded()):\n%v", err)
	}
	if len(course.Lessons) < 2 {
		t.Fatalf("got %d lessons, want at least 2", len(course.Lessons))
	}
	for i, l := range course.Lessons {
		t.Run(l.Slug, func(t *testing.T) {
			if l.Order != i+1 {
				t.Errorf("order = %d, want %d (lessons sorted, orders 1..n)", l.Order, i+1)
			}
			if l.Title == "" || l.Summary == "" || l.Minutes == 0 || len(l.Objectives) == 0 {
				t.Errorf("front matter incomplete: %+v", l)
			}
			if len(l.TOC) == 0 {
				t.Error("no table of contents")
			}
			if len(l.Playgrounds) == 0 && !l.IsReference() {
				t.Error("no playground block")
			}
			if course.Lesson(l.Slug) != l {
				t.Errorf("Lesson(%q) does not find the lesson", l.Slug)
			}
			var html strings.Builder
			for _, b := range l.Body {
				set := 0
				if b.HTML != "" {
					set++
				}
				if b.Playground != nil {
					set++
				}
				if b.Exercise != nil {
					set++
				}
				if set != 1 {
					t.Errorf("block %+v: %d fields set, want exactly 1", b, set)
				}
				html.WriteString(b.HTML)
			}
			wants := []string{`class="callout `, `<pre tabindex="0" class="chroma">`, `href="/lessons/`, `class="quiz"`, `href="/lessons/glossary#`}
			if l.IsReference() {
				wants = []string{`href="/lessons/`}
			}
			for _, want := range wants {
				if !strings.Contains(html.String(), want) {
					t.Errorf("rendered body lacks %q", want)
				}
			}
		})
	}
}

// The glossary is a reference page, told apart through its front matter;
// every other page is a numbered lesson by default.
func TestLoad_KindSetsReferencePages(t *testing.T) {
	course, err := Load(Embedded(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var references []string
	for _, l := range course.Lessons {
		switch l.Kind {
		case KindReference:
			references = append(references, l.Slug)
		case KindLesson:
		default:
			t.Errorf("%s: kind %q, want %q or %q", l.Slug, l.Kind, KindLesson, KindReference)
		}
		if l.IsReference() != (l.Kind == KindReference) {
			t.Errorf("%s: IsReference() = %v with kind %q", l.Slug, l.IsReference(), l.Kind)
		}
	}
	if got := strings.Join(references, " "); got != "glossary" {
		t.Errorf("reference pages = %q, want \"glossary\"", got)
	}
	if lessons := len(course.Lessons) - len(references); lessons < 12 {
		t.Errorf("%d numbered lessons, want at least 12", lessons)
	}
	if (&Lesson{}).IsReference() {
		t.Error("a Lesson with no Kind is a reference page; want a lesson")
	}
}

// The server loads at start while Watch may reload in the background: Load
// must share no mutable state between calls.
func TestLoad_ConcurrentCallsAreIndependent(t *testing.T) {
	// The fixture course uses every feature (includes, quiz, playgrounds
	// through the engine) and keeps the test quick under -race; the whole
	// course would only multiply the time.
	fixture := os.DirFS(filepath.Join("testdata", "render"))
	done := make(chan string, 4)
	for range 4 {
		go func() {
			course, err := Load(fixture, Options{})
			if err != nil {
				done <- err.Error()
				return
			}
			var all strings.Builder
			for _, l := range course.Lessons {
				all.WriteString(describeLesson(l))
			}
			done <- all.String()
		}()
	}
	first := <-done
	for range 3 {
		if got := <-done; got != first {
			t.Errorf("concurrent loads differ:\n%s\n---\n%s", first, got)
		}
	}
}
