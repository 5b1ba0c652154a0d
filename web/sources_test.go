package web

import (
	"idemlab/web/site"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"idemlab/lessons"
)

// A lesson's sources are listed after its body, as links (escaped, opened as
// external pages), in the full page and in the embed; a lesson without
// sources has no such section.
func TestLessonArticle_ListsSourcesAfterTheBody(t *testing.T) {
	v := testView(t)
	course := sampleCourse()
	l := course.Lessons[0]
	l.Sources = []lessons.Source{
		{Title: "Amazon SQS: visibility timeout", URL: "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html"},
		{Title: "<script>alert(1)</script> & more", URL: "https://example.com/a?b=1&c=2"},
	}
	pos, _ := site.PositionOf(course, l.Slug)
	for _, embed := range []bool{false, true} {
		doc := render(t, lessonArticle(v, l, pos, embed, nil))
		section := doc.Find(testID("lesson-sources"))
		if section.Length() != 1 {
			t.Fatalf("embed=%v: %d sources sections, want 1", embed, section.Length())
		}
		if prev := section.Prev(); !prev.Is(testID("lesson-body")) {
			t.Errorf("embed=%v: the sources follow <%s class=%q>, want the lesson body", embed, goquery.NodeName(prev), prev.AttrOr("class", ""))
		}
		if got := section.Find("h2").Text(); got != "Sources" {
			t.Errorf("embed=%v: heading %q", embed, got)
		}
		links := section.Find("ol > li > a")
		if links.Length() != 2 {
			t.Fatalf("embed=%v: %d links, want 2", embed, links.Length())
		}
		for i, s := range l.Sources {
			a := links.Eq(i)
			if a.Text() != s.Title || a.AttrOr("href", "") != s.URL || a.AttrOr("rel", "") != "external noreferrer" {
				t.Errorf("embed=%v: link %d is %q → %q (rel %q), want %q → %q", embed, i+1, a.Text(), a.AttrOr("href", ""), a.AttrOr("rel", ""), s.Title, s.URL)
			}
		}
		if section.Find("script").Length() != 0 {
			t.Errorf("embed=%v: a title's markup was not escaped", embed)
		}
	}
	other, _ := site.PositionOf(course, course.Lessons[1].Slug)
	if n := render(t, lessonArticle(v, course.Lessons[1], other, false, nil)).Find(testID("lesson-sources")).Length(); n != 0 {
		t.Errorf("a lesson without sources has %d sources sections", n)
	}
}

// Every numbered lesson of the built-in course shows its sources on its page.
func TestLessonPage_EmbeddedCourseShowsSources(t *testing.T) {
	course, err := lessons.Load(lessons.Embedded(), lessons.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := referenceServer(t, course).Handler()
	for _, l := range course.Lessons {
		if l.IsReference() {
			continue
		}
		doc := document(t, do(t, h, "GET", "/lessons/"+l.Slug))
		links := doc.Find(testID("lesson-sources") + " a")
		if links.Length() == 0 || links.Length() != len(l.Sources) {
			t.Errorf("%s: %d source links, want %d (and at least one)", l.Slug, links.Length(), len(l.Sources))
		}
	}
}
