package web

import (
	"bytes"
	"context"
	"idemlab/web/playview"
	"idemlab/web/site"
	"io"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"idemlab/lessons"
)

// render draws a component (inside a layout when one is given) and parses it.
func render(t *testing.T, c templ.Component) *goquery.Document {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatalf("render: %v", err)
	}
	doc, err := goquery.NewDocumentFromReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func testView(t *testing.T) *site.View {
	t.Helper()
	s := newTestServer(t, Config{Version: "1.2.3"})
	return s.site.Load().view
}

func TestPlaygroundBlock_ShowsSpecReadably(t *testing.T) {
	spec := sampleCourse().Lessons[0].Playgrounds[0]
	doc := render(t, playview.PlaygroundBlock(spec))
	fig := doc.Find("figure" + testID("playground"))
	if fig.Length() != 1 {
		t.Fatal("no figure[data-testid=playground]")
	}
	for attr, want := range map[string]string{
		"id":            "pg-1",
		"data-scenario": "lost-ack",
		"data-handlers": "increment,dedupe-tx",
		"data-script":   spec.Script,
	} {
		if got := fig.AttrOr(attr, ""); got != want {
			t.Errorf("%s = %q, want %q", attr, got, want)
		}
	}
	if got := fig.Find(testID("playground-scenario")).Text(); got != "lost-ack" {
		t.Errorf("scenario = %q", got)
	}
	if got := fig.Find("pre" + testID("playground-script") + " code").Text(); got != "deliver msg-1 lose-ack\nredeliver msg-1\n# the broker retries" {
		t.Errorf("script block = %q", got)
	}
	var handlers []string
	fig.Find(testID("playground-handlers") + " li").Each(func(_ int, s *goquery.Selection) {
		handlers = append(handlers, s.AttrOr("data-handler", "")+"="+s.Find(testID("playground-expect")).Text())
	})
	if got := strings.Join(handlers, " "); got != "increment=expected: duplicate-effect dedupe-tx=expected: ok" {
		t.Errorf("handlers = %q", got)
	}
	if got := fig.Find("figcaption").Text(); got != spec.Caption {
		t.Errorf("figcaption = %q", got)
	}
}

func TestPlaygroundBlock_EscapesEverything(t *testing.T) {
	spec := &lessons.PlaygroundSpec{
		ID: "pg-1", Scenario: `"><script>x</script>`, Handlers: []string{"<b>h</b>"},
		Script: "deliver <i>m</i>", Caption: "<img src=x onerror=alert(1)>",
	}
	doc := render(t, playview.PlaygroundBlock(spec))
	if n := doc.Find("script, b, i, img").Length(); n != 0 {
		t.Errorf("%d elements injected through the spec", n)
	}
	if got := doc.Find("figcaption").Text(); got != spec.Caption {
		t.Errorf("caption text = %q", got)
	}
}

func TestPlaygroundBlock_WithoutCaptionOrExpectations(t *testing.T) {
	spec := &lessons.PlaygroundSpec{ID: "pg-2", Scenario: "race", Handlers: []string{"increment"}, Script: "deliver msg-1"}
	doc := render(t, playview.PlaygroundBlock(spec))
	if doc.Find("figcaption").Length() != 0 || doc.Find(testID("playground-expect")).Length() != 0 {
		t.Error("empty caption or expectations should draw nothing")
	}
}

func TestLessonArticle_BodyOrderAndParts(t *testing.T) {
	v := testView(t)
	course := sampleCourse()
	pos, _ := site.PositionOf(course, "why-twice")
	doc := render(t, lessonArticle(v, course.Lessons[0], pos, false, nil))

	// Body blocks keep document order: HTML, playground, HTML.
	var order []string
	doc.Find(testID("lesson-body")).Children().Each(func(_ int, s *goquery.Selection) {
		if s.Is(testID("playground")) {
			order = append(order, "playground")
		} else if s.Is("h2") {
			order = append(order, "h2:"+s.AttrOr("id", ""))
		}
	})
	if got := strings.Join(order, " "); got != "h2:the-promise h2:a-lost-ack playground" {
		t.Errorf("body order = %q", got)
	}
	var toc []string
	doc.Find(testID("toc") + " li").Each(func(_ int, s *goquery.Selection) {
		toc = append(toc, s.AttrOr("class", "")+">"+s.Find("a").AttrOr("href", ""))
	})
	if got := strings.Join(toc, " "); got != "toc-level-2>#the-promise toc-level-3>#leases toc-level-2>#a-lost-ack" {
		t.Errorf("toc = %q", got)
	}
	if n := doc.Find(testID("objectives") + " li").Length(); n != 3 {
		t.Errorf("%d objectives, want 3", n)
	}
	if got := doc.Find(testID("lesson-position")).Text(); got != "Lesson 1 of 3" {
		t.Errorf("position = %q", got)
	}
	if got := doc.Find(testID("lesson-minutes")).Text(); got != "8 min read" {
		t.Errorf("minutes = %q", got)
	}
	if doc.Find(testID("done-toggle")).AttrOr("data-slug", "") != "why-twice" {
		t.Error("no done toggle at the end of the lesson")
	}
}

func TestLessonArticle_EmbedLeavesOutNavigation(t *testing.T) {
	v := testView(t)
	course := sampleCourse()
	pos, _ := site.PositionOf(course, "idempotent")
	doc := render(t, lessonArticle(v, course.Lessons[1], pos, true, nil))
	for _, id := range []string{"toc", "prev", "next", "pager", "done-toggle"} {
		if doc.Find(testID(id)).Length() != 0 {
			t.Errorf("embed article contains %s", id)
		}
	}
}

func TestIndexPage_EmptyCourse(t *testing.T) {
	v := testView(t)
	v.Course = &lessons.Course{}
	doc := render(t, indexPage(v))
	if doc.Find(testID("lesson-list-empty")).Length() != 1 || doc.Find(testID("start")).Length() != 0 {
		t.Error("an empty course should say so and offer no start button")
	}
}

func TestPage_LayoutParts(t *testing.T) {
	v := testView(t)
	doc := render(t, templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		return site.Page(v, site.PageMeta{Title: "T", Section: "home"}).Render(templ.WithChildren(ctx, templ.Raw(`<main id="main">x</main>`)), w)
	}))
	if doc.Find(`a.skip-link[href="#main"]`).Length() != 1 || doc.Find("main#main").Length() != 1 {
		t.Error("no skip link to main")
	}
	if doc.Find(testID("theme-toggle")).Is("button") == false {
		t.Error("theme toggle is not a button")
	}
	if got := doc.Find(testID("version")).Text(); got != "Version 1.2.3" {
		t.Errorf("version = %q", got)
	}
	// theme.js must run before first paint (no defer/async), app.js,
	// playground.js (after app.js, whose helpers it uses) and exercise.js
	// deferred; workshop.js only on workshop pages.
	scripts := doc.Find("head script")
	if scripts.Length() != 4 {
		t.Fatalf("%d scripts in head, want 4", scripts.Length())
	}
	if _, deferred := scripts.Eq(0).Attr("defer"); deferred || !strings.Contains(scripts.Eq(0).AttrOr("src", ""), "/theme.") {
		t.Error("theme.js must come first and load synchronously")
	}
	if _, deferred := scripts.Eq(1).Attr("defer"); !deferred {
		t.Error("app.js must be deferred")
	}
	if _, deferred := scripts.Eq(2).Attr("defer"); !deferred || !strings.Contains(scripts.Eq(2).AttrOr("src", ""), "/playground.") {
		t.Error("playground.js must come right after app.js, deferred")
	}
	if _, deferred := scripts.Eq(3).Attr("defer"); !deferred || !strings.Contains(scripts.Eq(3).AttrOr("src", ""), "/exercise.") {
		t.Error("exercise.js must come last, deferred")
	}
	if got := doc.Find("html").AttrOr("lang", ""); got != "en" {
		t.Errorf("lang = %q", got)
	}
}

func TestPageHead_WorkshopAssetsOnlyWhereNeeded(t *testing.T) {
	head := func(v *site.View, section string) (workshopJS, workshopCSS, named bool) {
		doc := render(t, templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
			return site.Page(v, site.PageMeta{Title: "T", Section: section}).Render(templ.WithChildren(ctx, templ.Raw(`<main id="main">x</main>`)), w)
		}))
		meta := doc.Find(`meta[name="idemlab-workshop"]`)
		named = meta.Length() == 1 && meta.AttrOr("content", "") == v.Assets.URL("workshop.js") && meta.AttrOr("data-css", "") == v.Assets.URL("workshop.css")
		return doc.Find(`script[src*="/workshop."]`).Length() == 1, doc.Find(`link[href*="/workshop."]`).Length() == 1, named
	}
	v := testView(t)
	for _, on := range []bool{false, true} {
		v.Workshop = on
		if js, css, named := head(v, "lesson"); js || css || named != on {
			t.Errorf("workshop mode %v, a lesson: workshop.js %v, workshop.css %v, named for a room's browser %v", on, js, css, named)
		}
		if js, css, named := head(v, "workshop"); !js || !css || named {
			t.Errorf("workshop mode %v, a workshop page: workshop.js %v, workshop.css %v, named %v; want both loaded", on, js, css, named)
		}
	}
}

func TestDurationText(t *testing.T) {
	for minutes, want := range map[int]string{0: "0 min", 45: "45 min", 60: "1 h", 125: "2 h 5 min"} {
		if got := site.DurationText(minutes); got != want {
			t.Errorf("durationText(%d) = %q, want %q", minutes, got, want)
		}
	}
}

func TestIndexPage_CourseFacts(t *testing.T) {
	doc := render(t, indexPage(testView(t)))
	if got := strings.Join(strings.Fields(doc.Find(testID("course-facts")).Text()), " "); got != "A hands-on course · 3 lessons · 26 min" {
		t.Errorf("course facts = %q", got)
	}
}
