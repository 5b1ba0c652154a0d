package loadtest

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestCheckLoopback_OnlyALocalServer(t *testing.T) {
	for _, ok := range []string{"http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:9000"} {
		if err := CheckLoopback(ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"http://example.org", "http://10.0.0.1:80", "https://127.0.0.1", "127.0.0.1:80", "http://0.0.0.0:80"} {
		if err := CheckLoopback(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestLinks_ThePlaygroundControlsAsAppJSFetchesThem(t *testing.T) {
	page := `<a href="/lessons/why?pg=pg-1&amp;script=deliver+msg-1#pg-1">x</a><a href="/static/app.css">y</a>` +
		`<a href="/playground?scenario=lost-ack&amp;at=1">z</a><a href="/lessons/other">w</a>`
	got := strings.Join(Links([]byte(page)), " ")
	want := "/lessons/why?pg=pg-1&script=deliver+msg-1&fragment=1 /playground?scenario=lost-ack&at=1&fragment=1"
	if got != want {
		t.Errorf("Links = %q\nwant     %q", got, want)
	}
}

func TestSummarise_Percentiles(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	l := summarise(d)
	if l.P50 != 51*time.Millisecond || l.P99 != 100*time.Millisecond || l.Max != 100*time.Millisecond || l.Count != 100 {
		t.Errorf("%+v", l)
	}
}

// The closed loop's client asks for gzip and reads the answer as the
// server sent it, compressed: inflating is the browser's work, not the
// server's.
func TestAsSent_AsksForGzipAndKeepsItCompressed(t *testing.T) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte(strings.Repeat("a click's fragment ", 100)))
	zw.Close()
	var asked string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = r.Header.Get("Accept-Encoding")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(zipped.Bytes())
	}))
	defer srv.Close()
	c := newClient(1)
	c.Transport = newAsSent(c.Transport.(*http.Transport))
	status, body, _, err := get(context.Background(), c, srv.URL, "/", "127.0.0.1")
	if err != nil || status != http.StatusOK {
		t.Fatalf("status %d, %v", status, err)
	}
	if asked != "gzip" || !bytes.Equal(body, zipped.Bytes()) {
		t.Errorf("Accept-Encoding %q, read %d bytes; want gzip and the %d compressed bytes as sent", asked, len(body), zipped.Len())
	}
}
