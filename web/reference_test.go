package web

import (
	"fmt"
	"idemlab/web/playurl"
	"io/fs"
	"log/slog"
	"strings"
	"testing"

	"idemlab/lessons"
)

// courseWithGlossary is the sample course with a reference page after its
// three lessons.
func courseWithGlossary() *lessons.Course {
	course := sampleCourse()
	course.Lessons = append(course.Lessons, &lessons.Lesson{
		Slug: "glossary", Title: "Glossary", Order: 4, Minutes: 5, Path: "glossary.md",
		Kind:       lessons.KindReference,
		Summary:    "The words this course uses.",
		Objectives: []string{"Look up a term"},
		Body:       []lessons.Block{{HTML: `<h3 id="ack">Ack</h3><p>The consumer tells the broker it is done.</p>`}},
	})
	return course
}

func referenceServer(t *testing.T, course *lessons.Course) *Server {
	t.Helper()
	s, err := NewServer(Config{Logger: slog.New(slog.DiscardHandler)}, course)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestIndexPage_ReferencePagesListedApartAndNotCounted(t *testing.T) {
	h := referenceServer(t, courseWithGlossary()).Handler()
	doc := document(t, do(t, h, "GET", "/"))
	if got := squash(doc.Find(testID("course-facts")).Text()); got != "A hands-on course · 3 lessons · 26 min" {
		t.Errorf("course facts = %q (the glossary counts as a lesson)", got)
	}
	if got := squash(doc.Find(testID("progress")).Text()); got != "0 of 3 lessons done" {
		t.Errorf("progress = %q", got)
	}
	if got := doc.Find(testID("progress")).AttrOr("data-slugs", ""); got != "why-twice idempotent dedupe-table" {
		t.Errorf("progress slugs = %q", got)
	}
	if n := doc.Find(testID("lesson-list") + " " + testID("lesson-item")).Length(); n != 3 {
		t.Errorf("the numbered list has %d items, want 3", n)
	}
	if doc.Find(testID("lesson-list")+` a[href="/lessons/glossary"]`).Length() != 0 {
		t.Error("the glossary is in the numbered lesson list")
	}
	refs := doc.Find(testID("reference-list") + " " + testID("reference-item"))
	if refs.Length() != 1 || refs.Find(`a[href="/lessons/glossary"]`).Length() != 1 {
		t.Fatalf("reference list has %d items, want the glossary", refs.Length())
	}
	if strings.TrimSpace(refs.Find(".lesson-number").Text()) != "" || strings.Contains(refs.Text(), "Lesson 4") {
		t.Error("the glossary is numbered")
	}
	if refs.Find(testID("done-toggle")).Length() != 0 {
		t.Error("the glossary has a done mark, but it is not part of the progress")
	}
}

func TestLessonPage_ReferencePageIsNotNumbered(t *testing.T) {
	h := referenceServer(t, courseWithGlossary()).Handler()
	doc := document(t, do(t, h, "GET", "/lessons/glossary"))
	if got := doc.Find(testID("lesson-position")).Text(); got != "Reference" {
		t.Errorf("position = %q, want Reference", got)
	}
	if doc.Find(testID("done-toggle")).Length() != 0 {
		t.Error("a reference page has a done toggle")
	}
	if got := doc.Find(testID("prev")).AttrOr("href", ""); got != "/lessons/dedupe-table" {
		t.Errorf("previous = %q, want the last lesson", got)
	}
	if doc.Find(testID("next")).Length() != 0 || doc.Find(testID("back-to-course")).Length() != 1 {
		t.Error("the glossary should lead back to the course")
	}
	nav := doc.Find(testID("course-nav"))
	if n := nav.Find("ol li").Length(); n != 3 {
		t.Errorf("course nav numbers %d pages, want 3", n)
	}
	ref := nav.Find(testID("course-nav-reference") + " li")
	if ref.Length() != 1 || ref.Find(`a[aria-current="page"]`).AttrOr("href", "") != "/lessons/glossary" {
		t.Error("course nav lacks the glossary, marked current, under Reference")
	}
	if got := strings.TrimSpace(ref.Find(".nav-number").Text()); got != "" {
		t.Errorf("course nav numbers the glossary %q", got)
	}
	embed := document(t, do(t, h, "GET", "/embed/lessons/glossary"))
	if got := squash(embed.Find(testID("embed-source")).Text()); !strings.HasPrefix(got, "A reference page of the Idemlab course.") {
		t.Errorf("embed source = %q", got)
	}

	// The last lesson ends the course instead of leading into the glossary.
	last := document(t, do(t, h, "GET", "/lessons/dedupe-table"))
	if got := last.Find(testID("lesson-position")).Text(); got != "Lesson 3 of 3" {
		t.Errorf("last lesson position = %q", got)
	}
	if last.Find(testID("next")).Length() != 0 || last.Find(testID("back-to-course")).Length() != 1 {
		t.Error("the last lesson should end the course")
	}
}

// The course as shipped: twelve numbered lessons and the glossary apart.
func TestIndexPage_EmbeddedCourseCountsItsLessons(t *testing.T) {
	course, err := lessons.Load(lessons.Embedded(), lessons.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Every numbered file (NN-slug.md) is a lesson; the glossary is not.
	numbered, _ := fs.Glob(lessons.Embedded(), "[0-9][0-9]-*.md")
	n := len(numbered)
	if n < 14 {
		t.Fatalf("%d numbered lesson files, want at least 14", n)
	}
	h := referenceServer(t, course).Handler()
	doc := document(t, do(t, h, "GET", "/"))
	if got := squash(doc.Find(testID("course-facts")).Text()); !strings.HasPrefix(got, fmt.Sprintf("A hands-on course · %d lessons · ", n)) {
		t.Errorf("course facts = %q, want %d lessons", got, n)
	}
	if got := squash(doc.Find(testID("progress")).Text()); got != fmt.Sprintf("0 of %d lessons done", n) {
		t.Errorf("progress = %q", got)
	}
	if got := doc.Find(testID("lesson-item")).Length(); got != n {
		t.Errorf("%d numbered lessons, want %d", got, n)
	}
	if got := doc.Find(testID("reference-item")).AttrOr("data-reference-slug", ""); got != "glossary" {
		t.Errorf("reference item = %q, want glossary", got)
	}
	glossary := document(t, do(t, h, "GET", "/lessons/glossary"))
	if got := glossary.Find(testID("lesson-position")).Text(); got != "Reference" {
		t.Errorf("glossary position = %q, want Reference", got)
	}
	last := document(t, do(t, h, "GET", playurl.LessonPath(course.Lessons[n-1].Slug)))
	if got, want := last.Find(testID("lesson-position")).Text(), fmt.Sprintf("Lesson %d of %d", n, n); got != want {
		t.Errorf("the last lesson's position = %q, want %q", got, want)
	}
}
