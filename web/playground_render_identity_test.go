package web

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"idemlab/web/admit"
	"idemlab/web/playurl"
	"idemlab/web/playview"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/klauspost/compress/zstd"

	"idemlab/playground"
)

var (
	updateRenderings = flag.Bool("update-renderings", false, "rewrite testdata/renderings.zst from the current renderings")
	dumpRenderings   = flag.String("dump-renderings", "", "write every rendering of TestLiveFragment_RenderingsUnchanged into this directory")
)

// renderingsGolden holds every rendering the crawl makes, in crawl order,
// each as "<!-- URL -->\n", its length in decimal, "\n" and its bytes, the
// whole zstd-compressed with a window long enough to span neighbouring
// states (214 MB of HTML in about 3 MB).
var renderingsGolden = filepath.Join("testdata", "renderings.zst")

// The live playground's HTML is drawn partly by templates and partly by
// hand (markup.go) for speed; a change of how it is drawn must not change
// what is drawn. TestLiveFragment_RenderingsUnchanged renders a crawl of
// states, every scenario's full-size, embedded and all-panels-open
// playground, every lesson block, a rejected script and a learner's
// handler, and every state each of them links to, and compares each
// rendering with the one recorded in testdata/renderings.zst (under -race,
// only the seeds' own renderings). The first that differs is printed as a
// diff; a deliberate change is recorded with -update-renderings.
func TestLiveFragment_RenderingsUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("renders a few thousand states")
	}
	course, s := builtinCourse(t), exerciseServer(t)
	s.adm.Budget.Wall = 1 << 62 // a loaded machine must not turn a state into a busy page
	s.limiter, s.adm.Limiter = admit.NewRateLimiter(1e12, 1e12, false), admit.NewRateLimiter(1e12, 1e12, false)
	h := s.Handler()
	get := func(target string) []byte {
		t.Helper()
		resp := do(t, h, "GET", target)
		for i := 0; i < 3 && resp.StatusCode == http.StatusSeeOther; i++ { // a form's answer, made canonical
			resp = do(t, h, "GET", resp.Header.Get("Location"))
		}
		body, _ := io.ReadAll(resp.Body)
		problem := resp.StatusCode == http.StatusBadRequest && strings.Contains(string(body), `data-testid="pg-problem"`)
		if resp.StatusCode != http.StatusOK && !problem { // a rejected edit is a 400 with the playground
			t.Fatalf("%s: status %d: %.300s", target, resp.StatusCode, body)
		}
		return body
	}
	const allPanels = "&show=rows,chart,diagram,steps,sql&open=workers,broker,handlers"
	var seeds []string
	for _, sc := range playground.Scenarios() {
		q := "scenario=" + sc.Name
		seeds = append(seeds, "/playground?"+q, "/playground?"+q+allPanels, "/embed/playground?"+q, "/embed/playground?"+q+allPanels)
	}
	for _, l := range course.Lessons {
		for _, b := range l.Body {
			if b.Playground != nil {
				seeds = append(seeds, "/lessons/"+l.Slug+"?pg="+b.Playground.ID, "/lessons/"+l.Slug+"?pg="+b.Playground.ID+allPanels)
			}
		}
	}
	for _, name := range playurl.MoreNames { // a control panel alone, as playground.js fetches it
		seeds = append(seeds, "/playground?scenario=lost-ack&"+playurl.KeyPanel+"="+name.Name, "/playground?scenario=partition-crash&"+playurl.KeyPanel+"="+name.Name)
	}
	seeds = append(seeds,
		"/playground?scenario=lost-ack&script=deliver+msg-1%0Adeliver+nosuch&was=deliver+msg-1",
		"/playground?scenario=lost-ack&handler="+url.QueryEscape("INSERT INTO processed_messages (message_id) VALUES (:message_id);")+allPanels,
	)
	// Every seed and every state it links to, once, in crawl order.
	seen := map[string]bool{}
	var states []string
	isSeed := map[string]bool{}
	for _, seed := range seeds {
		add := func(u string) {
			u, _, _ = strings.Cut(u, "#")
			if !seen[u] {
				seen[u] = true
				states = append(states, u)
			}
		}
		isSeed[seed] = true
		add(seed)
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(get(withFragment(seed)))))
		if err != nil {
			t.Fatal(err)
		}
		doc.Find("figure.pg a[href]").Each(func(_ int, a *goquery.Selection) {
			href := a.AttrOr("href", "")
			if strings.HasPrefix(href, "/playground?") || strings.HasPrefix(href, "/embed/playground?") || strings.HasPrefix(href, "/lessons/") && strings.Contains(href, "pg=") {
				add(href)
			}
		})
	}

	// The recording is held as digests (its bodies are hundreds of MB);
	// the first state that differs is read again for its diff.
	recorded := map[string][sha256.Size]byte{}
	var order []string
	if !*updateRenderings {
		var err error
		order, err = readRenderings(renderingsGolden, func(u string, body []byte) { recorded[u] = sha256.Sum256(body) })
		if err != nil {
			t.Fatalf("%v (go test -run %s -update-renderings records it)", err, t.Name())
		}
	}
	var out bytes.Buffer
	size, compared, differ := 0, 0, 0
	for _, u := range states {
		if raceEnabled && !isSeed[u] {
			continue // under -race, the seeds alone
		}
		body := get(withFragment(u))
		size += len(body)
		if *dumpRenderings != "" {
			name := sha256.Sum256([]byte(u))
			if err := os.WriteFile(filepath.Join(*dumpRenderings, hex.EncodeToString(name[:8])+".html"), fmt.Appendf(nil, "<!-- %s -->\n%s", u, body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if *updateRenderings {
			fmt.Fprintf(&out, "<!-- %s -->\n%d\n%s", u, len(body), body)
			continue
		}
		compared++
		want, ok := recorded[u]
		switch {
		case !ok:
			differ++
			if differ == 1 {
				t.Errorf("%s: a state the recording does not have (a new link or seed; -update-renderings records it)", u)
			}
		case want != sha256.Sum256(body):
			differ++
			if differ == 1 {
				var was []byte
				readRenderings(renderingsGolden, func(v string, b []byte) {
					if v == u {
						was = b
					}
				})
				t.Errorf("%s rendered differently from %s (-update-renderings records a deliberate change):\n%s", u, renderingsGolden, renderingDiff(was, body))
			}
		}
	}
	t.Logf("%d states from %d seeds, %d bytes rendered", len(states), len(seeds), size)
	if *updateRenderings {
		if raceEnabled {
			t.Fatal("-update-renderings records the whole crawl: run it without -race")
		}
		if err := writeRenderings(renderingsGolden, out.Bytes()); err != nil {
			t.Fatal(err)
		}
		return
	}
	if differ > 1 {
		t.Errorf("%d of %d states differ in all; the first is shown above", differ, compared)
	}
	if !raceEnabled && len(order) != len(states) {
		var gone []string
		for _, u := range order {
			if !seen[u] {
				gone = append(gone, u)
			}
		}
		t.Errorf("the recording has %d states, the crawl %d; recorded but no longer reached: %.5q", len(order), len(states), gone)
	}
}

// readRenderings reads a recording writeRenderings made, handing each
// state's URL and rendering to each, and returns the URLs in order.
func readRenderings(path string, each func(u string, body []byte)) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := zstd.NewReader(f, zstd.WithDecoderMaxWindow(1<<27), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	r := bufio.NewReaderSize(zr, 1<<16)
	var order []string
	for {
		head, err := r.ReadString('\n')
		if err == io.EOF && head == "" {
			return order, nil
		}
		u, ok := strings.CutPrefix(strings.TrimSuffix(head, " -->\n"), "<!-- ")
		if err != nil || !ok {
			return nil, fmt.Errorf("%s: state %d: bad header %.80q", path, len(order)+1, head)
		}
		line, err := r.ReadString('\n')
		n, convErr := strconv.Atoi(strings.TrimSuffix(line, "\n"))
		if err != nil || convErr != nil || n < 0 {
			return nil, fmt.Errorf("%s: %s: bad length %.20q", path, u, line)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, u, err)
		}
		each(u, body)
		order = append(order, u)
	}
}

// writeRenderings compresses a recording with a 128 MiB window, so that a
// state is stored as its difference from the states before it.
func writeRenderings(path string, rec []byte) error {
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf, zstd.WithWindowSize(1<<27), zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return err
	}
	if _, err := zw.Write(rec); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// renderingDiff shows where two renderings part: the lines around the first
// difference, with a line break after every tag so that one changed
// attribute is one changed line, then the next few lines that differ.
func renderingDiff(want, got []byte) string {
	split := func(b []byte) []string {
		return strings.Split(strings.ReplaceAll(string(b), ">", ">\n"), "\n")
	}
	w, g := split(want), split(got)
	first := 0
	for first < len(w) && first < len(g) && w[first] == g[first] {
		first++
	}
	// The common tail, so that an insertion shows as one.
	wEnd, gEnd := len(w), len(g)
	for wEnd > first && gEnd > first && w[wEnd-1] == g[gEnd-1] {
		wEnd, gEnd = wEnd-1, gEnd-1
	}
	var b strings.Builder
	for i := max(0, first-3); i < first; i++ {
		fmt.Fprintf(&b, "   %s\n", w[i])
	}
	const most = 12
	for i := first; i < min(wEnd, first+most); i++ {
		fmt.Fprintf(&b, " - %s\n", w[i])
	}
	if wEnd-first > most {
		fmt.Fprintf(&b, " - … %d more lines\n", wEnd-first-most)
	}
	for i := first; i < min(gEnd, first+most); i++ {
		fmt.Fprintf(&b, " + %s\n", g[i])
	}
	if gEnd-first > most {
		fmt.Fprintf(&b, " + … %d more lines\n", gEnd-first-most)
	}
	for i := wEnd; i < min(len(w), wEnd+3); i++ {
		fmt.Fprintf(&b, "   %s\n", w[i])
	}
	return fmt.Sprintf("(line %d of %d, tags one per line)\n%s", first+1, len(w), b.String())
}

// withFragment is a state's URL asking for the playground alone.
func withFragment(u string) string { return u + "&" + playview.FragmentParam + "=1" }

func TestRenderingDiff_ShowsWherePartsDiffer(t *testing.T) {
	for _, tc := range []struct {
		name, want, got string
		has             []string
	}{
		{"changed attribute", `<p><a title="x">Go</a></p>`, `<p><a title="y">Go</a></p>`, []string{"line 2 of", ` - <a title="x">`, ` + <a title="y">`, "   <p>"}},
		{"inserted tag", `<ul><li>a</li><li>c</li></ul>`, `<ul><li>a</li><li>b</li><li>c</li></ul>`, []string{" + <li>", " + b</li>"}},
		{"removed tail", `<p>a</p><p>b</p>`, `<p>a</p>`, []string{" - <p>", " - b</p>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := renderingDiff([]byte(tc.want), []byte(tc.got))
			for _, h := range tc.has {
				if !strings.Contains(d, h) {
					t.Errorf("diff lacks %q:\n%s", h, d)
				}
			}
		})
	}
}
