package web

import (
	"errors"
	"idemlab/web/playurl"
	"idemlab/web/site"
	"idemlab/web/workshopweb"
	"net/http/httptest"
	"net/url"
	"testing"

	"idemlab/playground"
	"idemlab/workshop"
)

var playgroundParseScript = playground.ParseScript

func FuzzPushForm(f *testing.F) {
	f.Add("kind=pace&mode=goto&lesson=2")
	f.Add("kind=countdown&exercise=ex-1&minutes=10")
	f.Add("kind=chaos&fault=replay")
	f.Add("kind=pace&mode=open&lesson=99")
	room := workshop.Room{Lessons: []string{"01", "02"}, Exercises: []string{"ex-1"}}
	f.Fuzz(func(t *testing.T, form string) {
		q, err := url.ParseQuery(form)
		if err != nil {
			return
		}
		e, err := workshopweb.PushFromForm(room, q.Get)
		if err != nil {
			we, ok := err.(*site.Error)
			if !ok || we.Field == "" || we.Status != 400 {
				t.Fatalf("error %v does not name a field", err)
			}
			return
		}
		if !e.Kind.Push() {
			t.Fatalf("accepted %+v", e)
		}
	})
}

func FuzzResumeFrom(f *testing.F) {
	f.Add("12", "")
	f.Add("", "7")
	f.Add("-1", "x")
	f.Fuzz(func(t *testing.T, header, after string) {
		r := httptest.NewRequest("GET", "/api/v1/room/stream?after="+url.QueryEscape(after), nil)
		r.Header.Set("Last-Event-ID", header)
		n, _, err := workshopweb.ResumeFrom(r)
		if err == nil && n < 0 {
			t.Fatalf("resume from %d", n)
		}
		if err != nil {
			if we, ok := err.(*site.Error); !ok || we.Field == "" {
				t.Fatalf("error %v does not name a field", err)
			}
		}
	})
}

func FuzzSharedPlaygroundQuery(f *testing.F) {
	f.Add("scenario=lost-ack&handlers=increment,dedupe-tx&script=deliver+msg-1+lose-ack%3B+redeliver+msg-1&handler=%40on+credit%0ASELECT+1%3B")
	f.Add("scenario=lost-ack&script=deliver&at=3")
	f.Add("%zz")
	f.Add("scenario=nope")
	f.Fuzz(func(t *testing.T, text string) {
		got, err := playurl.SharedQuery(text)
		if err != nil {
			var ie *playground.InputError
			if !errors.As(err, &ie) || ie.Field != "playground" {
				t.Fatalf("error %v does not name the field", err)
			}
			return
		}
		again, err := playurl.SharedQuery(got)
		if err != nil || again != got {
			t.Fatalf("the canonical %q reads back as %q, %v", got, again, err)
		}
	})
}

func FuzzScriptShape(f *testing.F) {
	f.Add("deliver m2 to B lose-ack; redeliver m2 to B")
	f.Add("not a script")
	f.Fuzz(func(t *testing.T, text string) {
		shape := workshopweb.ScriptShape(text)
		if _, err := playgroundParseScript(text); err == nil && workshopweb.ScriptShape(shape) != shape {
			t.Fatalf("the shape of %q is %q, whose shape is %q", text, shape, workshopweb.ScriptShape(shape))
		}
	})
}
