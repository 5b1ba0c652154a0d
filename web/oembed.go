package web

import (
	"encoding/json"
	"fmt"
	"html"
	"idemlab/web/playurl"
	"idemlab/web/site"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"idemlab/internal/english"
	"idemlab/playground"
)

// oEmbed (https://oembed.com): a wiki or docs tool that understands it
// turns a pasted lesson or playground link into the embedded view. Lesson
// and playground pages name the endpoint in a discovery <link>, and the
// playground's Embed button copies the same snippet the endpoint answers.

// oembedResponse is the "rich" type of the oEmbed 1.0 specification.
type oembedResponse struct {
	Version      string `json:"version"`
	Type         string `json:"type"`
	ProviderName string `json:"provider_name"`
	ProviderURL  string `json:"provider_url"`
	Title        string `json:"title"`
	HTML         string `json:"html"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
}

// Default sizes of an embed, before the page reports its real height.
const (
	oembedLessonWidth, oembedLessonHeight         = 760, 900
	oembedPlaygroundWidth, oembedPlaygroundHeight = 960, 900
	oembedMinSize                                 = 200
)

// serveOEmbed answers GET /oembed?url=…&format=json[&maxwidth=…&maxheight=…].
// As the specification asks: 404 for a URL it has nothing for, 501 for a
// format other than json, 400 for other bad parameters; errors are JSON
// (isAPI).
func (s *Server) serveOEmbed(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if f := q.Get("format"); f != "" && f != "json" {
		return &site.Error{Status: http.StatusNotImplemented, Message: fmt.Sprintf("format %q: only json is offered", english.Truncate(f, 20)), Field: "format"}
	}
	origin := s.origin
	if origin == "" {
		origin = requestOrigin(r)
	}
	resp, status, err := s.oembedFor(q.Get("url"), origin)
	if err != nil {
		return &site.Error{Status: status, Message: err.Error(), Field: "url"}
	}
	for _, p := range []struct {
		name string
		size *int
	}{{"maxwidth", &resp.Width}, {"maxheight", &resp.Height}} {
		if raw := q.Get(p.name); raw != "" {
			n, err := strconv.Atoi(raw)
			if err != nil || n < oembedMinSize {
				return &site.Error{Status: http.StatusBadRequest, Message: fmt.Sprintf("%s %q: want a number of pixels, at least %d", p.name, english.Truncate(raw, 20), oembedMinSize), Field: p.name}
			}
			*p.size = min(*p.size, n)
		}
	}
	resp.HTML = embedSnippet(origin, resp.HTML, resp.Title, resp.Width, resp.Height)
	return site.WriteJSON(w, r, http.StatusOK, site.Revalidate, resp)
}

// oembedFor resolves a page address of this site to its embed. The
// returned response's HTML holds the embed's site path until embedSnippet.
func (s *Server) oembedFor(raw, origin string) (oembedResponse, int, error) {
	v := s.site.Load().view
	resp := oembedResponse{Version: "1.0", Type: "rich", ProviderName: site.SiteName, ProviderURL: origin + v.Path("/")}
	if raw == "" {
		return resp, http.StatusBadRequest, fmt.Errorf("url: missing; pass url=ADDRESS of a lesson or playground")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https") || (u.IsAbs() && u.Scheme+"://"+u.Host != origin) {
		return resp, http.StatusNotFound, fmt.Errorf("url %q: not an address of this site (%s)", english.Truncate(raw, 80), origin)
	}
	path, ok := strings.CutPrefix(u.Path, s.base)
	if !ok {
		return resp, http.StatusNotFound, fmt.Errorf("url %q: not under this site's path %s", english.Truncate(raw, 80), s.base)
	}
	path = strings.TrimPrefix(path, "/embed")
	switch {
	case strings.HasPrefix(path, "/lessons/"):
		slug := strings.TrimPrefix(path, "/lessons/")
		pos, ok := site.PositionOf(v.Course, slug)
		if !ok {
			return resp, http.StatusNotFound, fmt.Errorf("url %q: there is no lesson %q", english.Truncate(raw, 80), english.Truncate(slug, 40))
		}
		resp.Title, resp.Width, resp.Height = pos.Lesson.Title, oembedLessonWidth, oembedLessonHeight
		resp.HTML = playurl.EmbedHref(playurl.EmbedPath(slug), u.Query(), u.Fragment)
	case path == "/playground":
		sc, err := playground.LookupScenario(u.Query().Get(playurl.KeyScenario))
		if err != nil {
			return resp, http.StatusNotFound, fmt.Errorf("url %q: %v", english.Truncate(raw, 80), err)
		}
		resp.Title, resp.Width, resp.Height = sc.Title+" · Playground", oembedPlaygroundWidth, oembedPlaygroundHeight
		resp.HTML = playurl.EmbedHref("/embed/playground", u.Query(), "")
	default:
		return resp, http.StatusNotFound, fmt.Errorf("url %q: only lessons and playgrounds can be embedded", english.Truncate(raw, 80))
	}
	resp.HTML = v.Path(resp.HTML)
	return resp, http.StatusOK, nil
}

// embedSnippet is the one embed code: an iframe of the embed page and the
// script that sizes it to the height the page reports (see app.js). The
// frame is as tall as its page and never scrolls, so when the page asks
// (an in-page link followed inside it: scrollTo, the target's offset from
// the frame's top) the host scrolls there instead.
func embedSnippet(origin, path, title string, width, height int) string {
	src := html.EscapeString(origin + path)
	quoted, _ := json.Marshal(origin) // a string: cannot fail; escapes < and >
	return `<iframe src="` + src + `" title="` + html.EscapeString(title) + `" width="` + strconv.Itoa(width) + `" height="` + strconv.Itoa(height) +
		`" style="width:100%;max-width:` + strconv.Itoa(width) + `px;border:0" loading="lazy"></iframe>` +
		`<script>addEventListener("message",function(e){if(e.origin!==` + string(quoted) + `||!e.data||e.data.type!=="idemlab:resize")return;` +
		`document.querySelectorAll("iframe").forEach(function(f){if(f.contentWindow!==e.source)return;f.style.height=e.data.height+"px";` +
		`if(typeof e.data.scrollTo==="number")scrollTo(0,f.getBoundingClientRect().top+scrollY+e.data.scrollTo)})});</script>`
}

// requestOrigin is scheme://host of the request, for a server without a
// public URL (the host is the one the client used).
func requestOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
