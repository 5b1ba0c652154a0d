package web

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"idemlab/lessons"
)

// Names shown in every page's chrome.
const (
	siteName    = "Idemlab"
	courseTitle = "Idempotent message consumers"
	siteTagline = "An interactive course on idempotent message consumers: deliver, redeliver, crash and replay messages against a real SQLite ledger."
)

// siteView is what every page needs to know about the site: where it lives,
// its assets and its course. One is built per course version.
type siteView struct {
	base    string // path prefix from PublicURL ("" at the root); routes stay at the root
	origin  string // "https://example.org" from PublicURL, "" when unset
	version string
	assets  *assetSet
	course  *lessons.Course
}

// path turns a site path ("/lessons/x") into the href to print.
func (v *siteView) path(p string) string { return v.base + p }

// absolute is the canonical absolute URL of a site path, or "" when the
// public URL is unknown (a guessed host would be worse than none).
func (v *siteView) absolute(p string) string {
	if v.origin == "" {
		return ""
	}
	return v.origin + v.base + p
}

// lessonPath is the site path of a lesson page; embedPath of its embed view.
func lessonPath(slug string) string { return "/lessons/" + url.PathEscape(slug) }
func embedPath(slug string) string  { return "/embed/lessons/" + url.PathEscape(slug) }

// pageMeta is what the layout needs from one page.
type pageMeta struct {
	title       string // shown before " · Idemlab"; "" on the home page
	description string
	canonical   string // site path of the page's canonical version
	prev, next  string // site paths for <link rel="prev/next">, or ""
	section     string // "home", "lesson" or "error": marks the current header link
}

func (m pageMeta) fullTitle() string {
	if m.title == "" {
		return siteName + " · " + courseTitle
	}
	return m.title + " · " + siteName
}

// lessonPosition places a lesson in its course.
type lessonPosition struct {
	number, total int
	prev, next    *lessons.Lesson
}

// positionOf places a lesson in its course: its number, and its neighbours
// as the lessons package defines them.
func positionOf(course *lessons.Course, slug string) (lessonPosition, bool) {
	i := slices.IndexFunc(course.Lessons, func(l *lessons.Lesson) bool { return l.Slug == slug })
	if i < 0 {
		return lessonPosition{}, false
	}
	pos := lessonPosition{number: i + 1, total: len(course.Lessons)}
	pos.prev, pos.next = course.Neighbours(slug)
	return pos, true
}

// plural writes "1 objective", "3 objectives".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func minutesText(n int) string {
	if n <= 0 {
		return "Short read"
	}
	return strconv.Itoa(n) + " min read"
}

// durationText writes a reading time: "45 min", "1 h", "2 h 5 min".
func durationText(minutes int) string {
	switch {
	case minutes < 60:
		return strconv.Itoa(minutes) + " min"
	case minutes%60 == 0:
		return strconv.Itoa(minutes/60) + " h"
	default:
		return strconv.Itoa(minutes/60) + " h " + strconv.Itoa(minutes%60) + " min"
	}
}

// courseSlugs lists every slug, space-separated, for the progress counter.
func courseSlugs(course *lessons.Course) string {
	slugs := make([]string, len(course.Lessons))
	for i, l := range course.Lessons {
		slugs[i] = l.Slug
	}
	return strings.Join(slugs, " ")
}

// courseMinutes is the whole course's reading time.
func courseMinutes(course *lessons.Course) int {
	total := 0
	for _, l := range course.Lessons {
		total += l.Minutes
	}
	return total
}

// scriptLines lays a playground script out one event per line for reading;
// comments stay on their own line. It only splits text: the engine's codec
// is the parser.
func scriptLines(script string) string {
	var out []string
	for _, line := range strings.Split(script, "\n") {
		code, comment, hasComment := strings.Cut(line, "#")
		for _, event := range strings.Split(code, ";") {
			if event = strings.TrimSpace(event); event != "" {
				out = append(out, event)
			}
		}
		if hasComment {
			if comment = strings.TrimSpace(comment); comment != "" {
				out = append(out, "# "+comment)
			}
		}
	}
	return strings.Join(out, "\n")
}
