package web

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestLessonFragment_ClosedPanelsAreNotDrawn: a lesson block's default
// state draws no panel (rows, chart, diagram, steps, SQL); each toggle is a
// plain link (no JavaScript needed) to the same state with its panel drawn
// and its toggle pressed, through the same route and admission path as any
// state; that toggle links back to the state without it.
func TestLessonFragment_ClosedPanelsAreNotDrawn(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	resp := do(t, h, "GET", "/lessons/why-twice?pg=pg-1&fragment=1")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	closed := len(body)
	doc := document(t, do(t, h, "GET", "/lessons/why-twice?pg=pg-1&fragment=1"))
	panels := map[string]string{ // toggle: what it draws
		"pg-show-rows":    "pg-rows",
		"pg-show-chart":   "pg-chart-panel",
		"pg-show-diagram": "pg-diagram-panel",
		"pg-show-steps":   "pg-steps",
	}
	for toggle, panel := range panels {
		if n := doc.Find(testID(panel)).Length(); n != 0 {
			t.Errorf("%s is drawn %d times in the default state", panel, n)
		}
		link := doc.Find(testID(toggle))
		href := link.AttrOr("href", "")
		if !link.Is("a[href]") || link.AttrOr("aria-expanded", "") != "false" || !strings.Contains(href, "show=") {
			t.Errorf("%s: want a link with aria-expanded=false to a state with show=…, got %s %q", toggle, goquery.NodeName(link), href)
			continue
		}
		open := document(t, do(t, h, "GET", beforeHash(href)))
		if open.Find("#pg-1 "+testID(panel)).Length() == 0 {
			t.Errorf("%s leads to %s, which does not draw %s", toggle, href, panel)
		}
		pressed := open.Find("#pg-1 " + testID(toggle))
		if pressed.AttrOr("aria-expanded", "") != "true" || pressed.AttrOr("href", "") != "/lessons/why-twice#pg-1" {
			t.Errorf("%s, once open: aria-expanded=%q, href %q (want the lesson itself)", toggle, pressed.AttrOr("aria-expanded", ""), pressed.AttrOr("href", ""))
		}
	}
	// The SQL is a panel inside the step list.
	steps := document(t, do(t, h, "GET", "/lessons/why-twice?pg=pg-1&show=steps"))
	if steps.Find(testID("pg-sql")).Length() != 0 {
		t.Error("the step list draws the SQL before it is asked for")
	}
	sqlHref := steps.Find("#pg-1 "+testID("pg-show-sql")).AttrOr("href", "")
	if withSQL := document(t, do(t, h, "GET", beforeHash(sqlHref))); withSQL.Find("#pg-1 "+testID("pg-sql")).Length() == 0 {
		t.Errorf("%s draws no SQL", sqlHref)
	}
	// A control keeps the panels open.
	back := steps.Find("#pg-1 "+testID("pg-back")).AttrOr("href", "")
	if !strings.Contains(back, "show=steps") {
		t.Errorf("Back with the steps open links to %q, which closes them", back)
	}
	resp = do(t, h, "GET", "/lessons/why-twice?pg=pg-1&show=rows,chart,diagram,steps,sql&fragment=1")
	all, _ := io.ReadAll(resp.Body)
	t.Logf("pg-1's default fragment: %d bytes; with every panel open: %d bytes", closed, len(all))
	if closed >= len(all)*3/4 {
		t.Errorf("the default fragment is %d bytes, with every panel %d: closed panels still cost", closed, len(all))
	}
}

// beforeHash is a link as a browser requests it: without its #fragment.
func beforeHash(href string) string {
	path, _, _ := strings.Cut(href, "#")
	return path
}
