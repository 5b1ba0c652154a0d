package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"
)

// workshopError is a workshop answer other than 200: its status, the field
// to blame, and a message in the visitor's terms. Under /api/ it is JSON
// {"error", "field"}; elsewhere the error page.
type workshopError struct {
	status  int
	field   string
	message string
}

func (e *workshopError) Error() string { return e.message }

func wsError(status int, field, message string) error {
	return &workshopError{status: status, field: field, message: message}
}

// handleWorkshop adapts a workshop handler: workshop errors get their own
// status (409, 410, 422, 429 are not page kinds), the rest go to the one
// error path.
func (s *Server) handleWorkshop(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		var we *workshopError
		if !errors.As(err, &we) {
			s.serveError(w, r, err)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/api/") {
			writeWorkshopJSON(w, r, we.status, map[string]string{"error": we.message, "field": we.field})
			return
		}
		site := s.site.Load()
		view := errorView{status: we.status, title: http.StatusText(we.status), message: we.message}
		if we.status == http.StatusForbidden || we.status == http.StatusUnauthorized || we.status == http.StatusGone {
			view.action = &link{Label: "Join a room", Href: site.view.path("/join")}
		}
		if err := writeWorkshopHTML(w, r, we.status, page(site.view, pageMeta{title: view.title, section: "error"}), s.errorContent(site.view, view)); err != nil {
			s.serveError(w, r, err)
		}
	})
}

// writeWorkshopHTML renders content in layout into a buffer, then writes it
// uncached. Nothing is written if rendering fails.
func writeWorkshopHTML(w http.ResponseWriter, r *http.Request, status int, layout, content templ.Component) error {
	var buf bytes.Buffer
	if err := layout.Render(templ.WithChildren(r.Context(), content), &buf); err != nil {
		return err
	}
	writeWorkshopBody(w, r, status, htmlContentType, buf.Bytes())
	return nil
}

var workshopJSONType = []string{"application/json; charset=utf-8"}

// writeWorkshopJSON writes v as JSON, uncached.
func writeWorkshopJSON(w http.ResponseWriter, r *http.Request, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	writeWorkshopBody(w, r, status, workshopJSONType, append(body, '\n'))
	return nil
}

func writeWorkshopBody(w http.ResponseWriter, r *http.Request, status int, contentType []string, body []byte) {
	h := w.Header()
	h["Content-Type"] = contentType
	h["Cache-Control"] = cacheControl[noStore]
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// clientLimiter counts each client's (by IP address) failures in a sliding
// window and refuses the client once it has n of them.
type clientLimiter struct {
	n      int
	window time.Duration
	mu     sync.Mutex
	seen   map[string][]time.Time
}

func newClientLimiter(n int, window time.Duration) *clientLimiter {
	return &clientLimiter{n: n, window: window, seen: make(map[string][]time.Time)}
}

func clientOf(r *http.Request) string {
	client, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return client
}

// allow says whether the client is under its limit, and if not, how many
// seconds until it is.
func (l *clientLimiter) allow(r *http.Request, now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	recent := l.recent(clientOf(r), now)
	if len(recent) >= l.n {
		return false, int((l.window-now.Sub(recent[0]))/time.Second) + 1
	}
	return true, 0
}

// fail counts one failure of the client.
func (l *clientLimiter) fail(r *http.Request, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.seen) > 10000 { // forget everyone rather than grow without bound
		clear(l.seen)
	}
	client := clientOf(r)
	l.seen[client] = append(l.recent(client, now), now)
}

func (l *clientLimiter) recent(client string, now time.Time) []time.Time {
	recent := l.seen[client][:0]
	for _, t := range l.seen[client] {
		if now.Sub(t) < l.window {
			recent = append(recent, t)
		}
	}
	l.seen[client] = recent
	return recent
}
