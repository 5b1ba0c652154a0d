package site

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"idemlab/lessons"
	"idemlab/playground"
)

// Names shown in every page's chrome.
const (
	SiteName    = "Idemlab"
	CourseTitle = "Idempotent message consumers"
	SiteTagline = "An interactive course on idempotent message consumers: deliver, redeliver, crash and replay messages against a real SQLite ledger."
)

// View is what every page needs to know about the site: where it lives,
// its assets and its course. One is built per course version.
type View struct {
	Base    string // path prefix from PublicURL ("" at the root); routes stay at the root
	Origin  string // "https://example.org" from PublicURL, "" when unset
	Version string
	Assets  *Assets
	Course  *lessons.Course
	// workshop: workshop mode is on, so pages name the workshop assets
	// for a browser in a room (see pageHead).
	Workshop bool
	// ledgers: the server's PostgreSQL ledgers (ledger=…); nil: SQLite only.
	Ledgers *playground.PostgresLedgers
}

// path turns a site path ("/lessons/x") into the href to print.
func (v *View) Path(p string) string { return v.Base + p }

// absolute is the canonical absolute URL of a site path, or "" when the
// public URL is unknown (a guessed host would be worse than none).
func (v *View) Absolute(p string) string {
	if v.Origin == "" {
		return ""
	}
	return v.Origin + v.Base + p
}

// PageMeta is what the layout needs from one page.
type PageMeta struct {
	Title       string // shown before " · Idemlab"; "" on the home page
	Description string
	Canonical   string // site path of the page's canonical version
	Prev, Next  string // site paths for <link rel="prev/next">, or ""
	Section     string // "home", "lesson" or "error": marks the current header link
}

func (m PageMeta) fullTitle() string {
	if m.Title == "" {
		return SiteName + " · " + CourseTitle
	}
	return m.Title + " · " + SiteName
}

// LessonPosition places a page in its course. Numbered lessons have a
// number (1-based) out of total; reference pages have number 0.
type LessonPosition struct {
	Lesson        *lessons.Lesson
	number, total int
	Prev, Next    *lessons.Lesson
}

// Label is the page's kicker: "Lesson 3 of 12", or "Reference".
func (p LessonPosition) Label() string {
	if p.number == 0 {
		return "Reference"
	}
	return "Lesson " + strconv.Itoa(p.number) + " of " + strconv.Itoa(p.total)
}

// ShortLabel names the page in a back link: "Lesson 3", or "Reference".
func (p LessonPosition) ShortLabel() string {
	if p.number == 0 {
		return "Reference"
	}
	return "Lesson " + strconv.Itoa(p.number)
}

// PositionOf places a page in its course. A lesson's neighbours are the
// numbered lessons around it, so that the last lesson ends the course rather
// than leading into the glossary; a reference page keeps the neighbours the
// lessons package gives it (the glossary goes back to the last lesson).
func PositionOf(course *lessons.Course, slug string) (LessonPosition, bool) {
	l := course.Lesson(slug)
	if l == nil {
		return LessonPosition{}, false
	}
	pos := LessonPosition{Lesson: l}
	if l.IsReference() {
		pos.Prev, pos.Next = course.Neighbours(slug)
		return pos, true
	}
	numbered := NumberedLessons(course)
	i := slices.Index(numbered, l)
	pos.number, pos.total = i+1, len(numbered)
	if i > 0 {
		pos.Prev = numbered[i-1]
	}
	if i+1 < len(numbered) {
		pos.Next = numbered[i+1]
	}
	return pos, true
}

// NumberedLessons is the course without its reference pages: what the
// index numbers, counts and tracks progress over.
func NumberedLessons(course *lessons.Course) []*lessons.Lesson {
	return slices.DeleteFunc(slices.Clone(course.Lessons), (*lessons.Lesson).IsReference)
}

// ReferencePages is the course's reference pages (a glossary), in order.
func ReferencePages(course *lessons.Course) []*lessons.Lesson {
	return slices.DeleteFunc(slices.Clone(course.Lessons), func(l *lessons.Lesson) bool { return !l.IsReference() })
}

func MinutesText(n int) string {
	if n <= 0 {
		return "Short read"
	}
	return strconv.Itoa(n) + " min read"
}

// DurationText writes a reading time: "45 min", "1 h", "2 h 5 min".
func DurationText(minutes int) string {
	switch {
	case minutes < 60:
		return strconv.Itoa(minutes) + " min"
	case minutes%60 == 0:
		return strconv.Itoa(minutes/60) + " h"
	default:
		return strconv.Itoa(minutes/60) + " h " + strconv.Itoa(minutes%60) + " min"
	}
}

// CourseSlugs lists every numbered lesson's slug, space-separated, for the
// progress counter.
func CourseSlugs(course *lessons.Course) string {
	numbered := NumberedLessons(course)
	slugs := make([]string, len(numbered))
	for i, l := range numbered {
		slugs[i] = l.Slug
	}
	return strings.Join(slugs, " ")
}

// CourseMinutes is the reading time of the numbered lessons: reference
// pages are looked things up in, not read through.
func CourseMinutes(course *lessons.Course) int {
	total := 0
	for _, l := range NumberedLessons(course) {
		total += l.Minutes
	}
	return total
}

// SiteHTML prefixes the site paths in rendered lesson HTML (href="/…",
// written by lessons, which knows no base) with the base, so that links
// inside lessons, quizzes and goals honour a base path like every other
// link. Protocol-relative and other URLs are left alone.
func (v *View) SiteHTML(html string) string {
	if v.Base == "" {
		return html
	}
	const attr = `href="/`
	var b strings.Builder
	for {
		i := strings.Index(html, attr)
		if i < 0 {
			b.WriteString(html)
			return b.String()
		}
		b.WriteString(html[:i+len(attr)-1])
		if !strings.HasPrefix(html[i+len(attr):], "/") {
			b.WriteString(v.Base)
		}
		html = html[i+len(attr)-1:]
	}
}

// OEmbedHref is the discovery link of a page: the endpoint asked about
// the page's canonical address (absolute when the public URL is known,
// else a site path, which the endpoint resolves against its own origin).
func (v *View) OEmbedHref(m PageMeta) string {
	target := v.Absolute(m.Canonical)
	if target == "" {
		target = v.Path(m.Canonical)
	}
	return v.Path("/oembed?format=json&url=" + url.QueryEscape(target))
}

// embeddable reports that a page has an embedded view: a lesson or a
// playground state.
func (m PageMeta) embeddable() bool {
	return strings.HasPrefix(m.Canonical, "/lessons/") || strings.HasPrefix(m.Canonical, "/playground?")
}
