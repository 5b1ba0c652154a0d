package web

import (
	"idemlab/web/site"
	"net/http"
	"net/url"

	"idemlab/workshop"
)

// lessonLocked answers a room learner's request for a lesson their
// instructor has not opened yet ("open up to lesson N") with a page saying
// so, and reports true. Everyone else (no learner cookie or token: the
// store is not even asked), a lesson the room does not cover, and any
// failure to tell (the store unavailable) get false: the lesson as usual,
// since lessons are public and the lock only paces a room.
func (s *workshopPages) lessonLocked(w http.ResponseWriter, r *http.Request, slug string, embed bool) (bool, error) {
	if s.workshop == nil {
		return false, nil
	}
	tok, fromURL, err := learnerTokenFrom(r)
	if err != nil {
		return false, nil
	}
	room, _, err := s.workshop.svc.Resume(r.Context(), tok)
	if err != nil || !room.Open() {
		return false, nil
	}
	open, err := s.workshop.svc.OpenLessonsNow(r.Context(), room)
	if err != nil || !workshop.LessonLocked(room, open, slug) {
		return false, nil
	}
	title := s.lessonTitler()
	var opened []lessonLink
	for _, l := range room.Lessons[:open] {
		opened = append(opened, lessonLink{slug: l, title: title(l)})
	}
	token := ""
	if fromURL {
		token = string(tok)
	}
	meta := site.PageMeta{Title: title(slug), Section: "workshop"}
	layout := site.Page(s.view(), meta)
	if embed {
		layout = site.EmbedPage(s.view(), meta)
	}
	return true, site.WriteHTML(w, r, http.StatusOK, site.NoStore, layout, lessonLockedPage(s.view(), title(slug), opened, token))
}

// embedQuery carries a learner's token in a link inside an embed (no
// third-party cookie there); elsewhere it is empty.
func embedQuery(token string) string {
	if token == "" {
		return ""
	}
	return "?" + learnerTokenParam + "=" + url.QueryEscape(token)
}
