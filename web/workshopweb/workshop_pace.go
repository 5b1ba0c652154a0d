package workshopweb

import (
	"idemlab/web/site"
	"net/http"
	"net/url"

	"idemlab/workshop"
)

// LessonLocked answers a room learner's request for a lesson their
// instructor has not opened yet ("open up to lesson N") with a page saying
// so, and reports true. Everyone else (no learner cookie or token: the
// store is not even asked), a lesson the room does not cover, and any
// failure to tell (the store unavailable) get false: the lesson as usual,
// since lessons are public and the lock only paces a room.
func (s *Pages) LessonLocked(w http.ResponseWriter, r *http.Request, slug string, embed bool) (bool, error) {
	if s.Workshop == nil {
		return false, nil
	}
	tok, fromURL, err := learnerTokenFrom(r)
	if err != nil {
		return false, nil
	}
	room, _, err := s.Workshop.svc.Resume(r.Context(), tok)
	if err != nil || !room.Open() {
		return false, nil
	}
	open, err := s.Workshop.svc.OpenLessonsNow(r.Context(), room)
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
	layout := site.Page(s.View(), meta)
	if embed {
		layout = site.EmbedPage(s.View(), meta)
	}
	return true, site.WriteHTML(w, r, http.StatusOK, site.NoStore, layout, lessonLockedPage(s.View(), title(slug), opened, token))
}

// embedQuery carries a learner's token in a link inside an embed (no
// third-party cookie there); elsewhere it is empty.
func embedQuery(token string) string {
	if token == "" {
		return ""
	}
	return "?" + learnerTokenParam + "=" + url.QueryEscape(token)
}
