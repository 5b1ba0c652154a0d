package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"idemlab/playground"
	"idemlab/web/site"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/a-h/templ"
)

func TestServer_NotFoundIsFriendly(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	resp := do(t, h, "GET", "/lessons/<b>nope</b>")
	if resp.StatusCode != 404 {
		t.Fatalf("status = %d, want 404", resp.StatusCode)
	}
	doc := document(t, resp)
	page := doc.Find(testID("error-page"))
	if page.Length() != 1 || page.AttrOr("data-status", "") != "404" {
		t.Fatalf("no error-page with data-status 404")
	}
	if msg := doc.Find(testID("error-message")).Text(); !strings.Contains(msg, "<b>nope</b>") {
		t.Errorf("message %q does not name the slug (escaped)", msg)
	}
	if doc.Find("b").Length() != 0 {
		t.Error("the slug was not escaped")
	}
	if doc.Find(testID("site-header")).Length() != 1 || doc.Find(testID("site-footer")).Length() != 1 {
		t.Error("the 404 page is not inside the site layout")
	}
	if n := doc.Find(".error-suggestions li").Length(); n != 3 {
		t.Errorf("404 page suggests %d lessons, want 3", n)
	}
}

func TestServer_MethodNotAllowed(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	resp := do(t, h, "POST", "/lessons/why-twice")
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("status = %d, want 405", resp.StatusCode)
	}
	if allow := resp.Header.Get("Allow"); allow != "GET, HEAD" {
		t.Errorf("Allow = %q, want \"GET, HEAD\"", allow)
	}
	doc := document(t, resp)
	if doc.Find(testID("error-page")).AttrOr("data-status", "") != "405" {
		t.Error("405 body is not the friendly error page")
	}
	if msg := doc.Find(testID("error-message")).Text(); !strings.Contains(msg, "POST") || !strings.Contains(msg, "GET, HEAD") {
		t.Errorf("message %q should name the method and the allowed ones", msg)
	}
}

func TestServer_CrossOriginPostIsRefused(t *testing.T) {
	h := newTestServer(t, Config{}).Handler()
	resp := do(t, h, "POST", "/lessons/why-twice", "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status = %d, want 403", resp.StatusCode)
	}
	if document(t, resp).Find(testID("error-page")).AttrOr("data-status", "") != "403" {
		t.Error("403 body is not the friendly error page")
	}
	// A cross-site GET is a normal visit (a link from elsewhere).
	if resp := do(t, h, "GET", "/lessons/why-twice", "Sec-Fetch-Site", "cross-site"); resp.StatusCode != 200 {
		t.Errorf("cross-site GET status = %d, want 200", resp.StatusCode)
	}
}

func TestServer_PanicBecomesLogged500(t *testing.T) {
	var logs bytes.Buffer
	s := newTestServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	h := s.withRequestLog(s.withRecovery(s.withSecurityHeaders(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("handler exploded")
	}))))
	resp := do(t, h, "GET", "/lessons/why-twice")
	if resp.StatusCode != 500 {
		t.Fatalf("status = %d, want 500", resp.StatusCode)
	}
	doc := document(t, resp)
	if doc.Find(testID("error-page")).AttrOr("data-status", "") != "500" {
		t.Error("no friendly 500 page")
	}
	if strings.Contains(doc.Text(), "exploded") {
		t.Error("the 500 page leaks the panic value")
	}
	for _, want := range []string{"panic serving request", "handler exploded", "stack=", "status=500"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

func TestServer_InternalErrorIsLoggedNotShown(t *testing.T) {
	var logs bytes.Buffer
	s := newTestServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	h := s.handle(func(http.ResponseWriter, *http.Request) error { return errors.New("disk on fire") })
	resp := do(t, h, "GET", "/x")
	if resp.StatusCode != 500 {
		t.Fatalf("status = %d", resp.StatusCode)
	}
	if body, _ := io.ReadAll(resp.Body); bytes.Contains(body, []byte("disk on fire")) {
		t.Error("the internal error reached the visitor")
	}
	if !strings.Contains(logs.String(), "disk on fire") {
		t.Errorf("internal error not logged:\n%s", logs.String())
	}
}

func TestServer_InvalidErrorShowsMessageAndAction(t *testing.T) {
	s := newTestServer(t, Config{})
	h := s.handle(func(http.ResponseWriter, *http.Request) error {
		return site.Invalidf(&site.Link{Label: "Back to the start", Href: "/playground?scenario=lost-ack"}, "line 1: unknown event %q", "delivr")
	})
	resp := do(t, h, "GET", "/x")
	if resp.StatusCode != 400 {
		t.Fatalf("status = %d, want 400", resp.StatusCode)
	}
	doc := document(t, resp)
	if got := doc.Find(testID("error-message")).Text(); got != `line 1: unknown event "delivr"` {
		t.Errorf("message = %q", got)
	}
	if got := doc.Find(testID("error-action")).AttrOr("href", ""); got != "/playground?scenario=lost-ack" {
		t.Errorf("action href = %q", got)
	}
}

func TestServer_ErrorPageFallback(t *testing.T) {
	var logs bytes.Buffer
	s := newTestServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	s.errorContent = func(*site.View, site.ErrorView) templ.Component {
		return templ.ComponentFunc(func(context.Context, io.Writer) error { return errors.New("template broke") })
	}
	resp := do(t, s.Handler(), "GET", "/lessons/nope")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 500 || !bytes.Equal(body, []byte(fallbackErrorPage)) {
		t.Errorf("status %d, body %q; want 500 and the fallback page", resp.StatusCode, body)
	}
	if !strings.Contains(logs.String(), "template broke") {
		t.Errorf("render failure not logged:\n%s", logs.String())
	}
}

func TestServer_EmbedErrorKeepsEmbedLayout(t *testing.T) {
	resp := do(t, newTestServer(t, Config{}).Handler(), "GET", "/embed/lessons/nope")
	doc := document(t, resp)
	if resp.StatusCode != 404 || doc.Find(testID("error-page")).Length() != 1 {
		t.Fatalf("status %d, want the 404 page", resp.StatusCode)
	}
	if doc.Find("header, footer").Length() != 0 || !doc.Find("body").HasClass("embed-body") {
		t.Error("an error inside an iframe should keep the embed layout")
	}
}

// TestServeError_APIAnswersJSON: under /api/ every failure, whoever finds
// it (a handler, the mux, cross-origin protection, a panic), is answered
// by the one error path as {"error", "field"}.
func TestServeError_APIAnswersJSON(t *testing.T) {
	var logs bytes.Buffer
	s := newTestServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	h := s.Handler()
	tests := []struct {
		name, method, target string
		form                 url.Values
		headers              []string
		status               int
		field, message       string
	}{
		{"bad input", "GET", "/api/v1/run?scenario=lost-ack&script=deliver+msg-1%3B+step", nil, nil, 400, "script", "script: event 2:"},
		{"unknown exercise", "POST", "/api/v1/check", url.Values{"exercise": {"nope"}, "handler": {"SELECT 1;"}}, nil, 404, "exercise", "no exercise called"},
		{"no route", "GET", "/api/v1/nope", nil, nil, 404, "", "There is no page at /api/v1/nope"},
		{"wrong method", "GET", "/api/v1/check", nil, nil, 405, "", "accepts POST"},
		{"cross-origin", "POST", "/api/v1/check", url.Values{}, []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}, 403, "", "came from another site"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var resp *http.Response
			if tt.form != nil {
				resp = postForm(t, h, tt.target, tt.form, tt.headers...)
			} else {
				resp = do(t, h, tt.method, tt.target, tt.headers...)
			}
			body := readBody(t, resp)
			if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" || resp.Header.Get("Cache-Control") != "no-store" {
				t.Fatalf("%d %s, Cache-Control %q; want %d JSON, no-store: %s", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"), tt.status, body)
			}
			var got site.APIError
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatalf("not JSON: %v: %s", err, body)
			}
			if got.Field != tt.field || !strings.Contains(got.Error, tt.message) {
				t.Errorf("got %+v, want field %q and %q", got, tt.field, tt.message)
			}
		})
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("a visitor's mistake was logged as an error:\n%s", logs.String())
	}

	api := s.handle(func(http.ResponseWriter, *http.Request) error { return errors.New("disk on fire") })
	resp := do(t, api, "GET", "/api/v1/x")
	body := readBody(t, resp)
	if resp.StatusCode != 500 || strings.Contains(body, "disk on fire") || !strings.Contains(body, `"error":"`+site.InternalMessage+`"`) {
		t.Errorf("internal error: %d %s", resp.StatusCode, body)
	}
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "disk on fire") {
		t.Errorf("the internal error was not logged:\n%s", logs.String())
	}
}

// TestServeError_ClientWentAway: a request whose client left before its
// answer was ready is noted, not logged as a 500 of ours.
func TestServeError_ClientWentAway(t *testing.T) {
	for _, target := range []string{
		"/playground?scenario=lost-ack&script=deliver+msg-1+lose-ack%3B+redeliver+msg-1",
		"/api/v1/run?scenario=lost-ack",
	} {
		t.Run(target, func(t *testing.T) {
			var logs bytes.Buffer
			s := newTestServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", target, nil).WithContext(ctx))
			if rec.Code != site.StatusClientClosedRequest {
				t.Errorf("status %d, want %d", rec.Code, site.StatusClientClosedRequest)
			}
			if strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "the client went away") {
				t.Errorf("want an INFO line and no ERROR:\n%s", logs.String())
			}
		})
	}
}

// TestClassify is the one table from an error to a status.
func TestClassify(t *testing.T) {
	back := &site.Link{Label: "Back", Href: "/playground?scenario=lost-ack"}
	input := &playground.InputError{Field: "script", Msg: "event 2: unknown event"}
	live := httptest.NewRequest("GET", "/", nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	gone := live.WithContext(ctx)
	tests := []struct {
		name    string
		r       *http.Request
		err     error
		status  int
		message string
		field   string
		action  *site.Link
	}{
		{"engine input", live, input, 400, "script: event 2: unknown event", "script", nil},
		{"wrapped engine input", live, fmt.Errorf("running: %w", input), 400, "script: event 2: unknown event", "script", nil},
		{"a link the playground cannot run", live, site.CannotRun(back, fmt.Errorf("running: %w", input)), 400, "The playground cannot run this link. script: event 2: unknown event", "script", back},
		{"a run that failed on our side", live, site.CannotRun(back, errors.New("disk on fire")), 500, site.InternalMessage, "", nil},
		{"not found", live, site.NotFoundf("no lesson %q", "x"), 404, `no lesson "x"`, "", nil},
		{"invalid", live, site.Invalidf(back, "at: bad"), 400, "at: bad", "", back},
		{"a status of its own", live, &site.Error{Status: 429, Message: "busy"}, 429, "busy", "", nil},
		{"ours", live, errors.New("disk on fire"), 500, site.InternalMessage, "", nil},
		{"the client left", gone, fmt.Errorf("running: %w", context.Canceled), site.StatusClientClosedRequest, "The request was cancelled before its answer was ready.", "", nil},
		{"input, though the client left", gone, input, 400, "script: event 2: unknown event", "script", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := site.Classify(tt.r, tt.err)
			if got.Status != tt.status || got.Message != tt.message || got.Field != tt.field || got.Action != tt.action {
				t.Errorf("classify = %d %q field %q action %v; want %d %q field %q action %v", got.Status, got.Message, got.Field, got.Action, tt.status, tt.message, tt.field, tt.action)
			}
		})
	}
}
