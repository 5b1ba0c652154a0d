package web

import (
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
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"idemlab/playground"
)

var (
	updateRenderings = flag.Bool("update-renderings", false, "rewrite testdata/renderings.sha256 from the current renderings")
	dumpRenderings   = flag.String("dump-renderings", "", "write every rendering of TestLiveFragment_RenderingsUnchanged into this directory, to diff two versions")
)

// The live playground's HTML is drawn partly by templates and partly by
// hand (markup.go) for speed; a change of how it is drawn must not change
// what is drawn. TestLiveFragment_RenderingsUnchanged renders a crawl of
// states, every scenario's full-size, embedded and all-panels-open
// playground, every lesson block, a rejected script and a learner's
// handler, and every state each of them links to, and compares each
// rendering's SHA-256 with testdata/renderings.sha256 (under -race, only
// the seeds' own renderings). A deliberate change
// of the bytes is reviewed with -dump-renderings DIR before and after
// (diff -r) and recorded with -update-renderings.
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
	// Every seed and every state it links to, once, in groups by seed: a
	// group's digest covers its states' URLs and bytes.
	seen := map[string]bool{}
	type group struct {
		seed   string
		states []string
	}
	var groups []group
	for _, seed := range seeds {
		g := group{seed: seed}
		add := func(u string) {
			u, _, _ = strings.Cut(u, "#")
			if !seen[u] {
				seen[u] = true
				g.states = append(g.states, u)
			}
		}
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
		groups = append(groups, g)
	}
	var lines []string
	states, size := 0, 0
	for _, g := range groups {
		sum := sha256.New()
		var seed [sha256.Size]byte
		for i, u := range g.states {
			if raceEnabled && i > 0 {
				break // under -race, the seed alone
			}
			body := get(withFragment(u))
			if i == 0 {
				seed = sha256.Sum256(body)
			}
			fmt.Fprintf(sum, "%s\n%d\n", u, len(body))
			sum.Write(body)
			states, size = states+1, size+len(body)
			if *dumpRenderings != "" {
				name := sha256.Sum256([]byte(u))
				if err := os.WriteFile(filepath.Join(*dumpRenderings, hex.EncodeToString(name[:8])+".html"), fmt.Appendf(nil, "<!-- %s -->\n%s", u, body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		lines = append(lines, fmt.Sprintf("%x %x %d %s", seed[:8], sum.Sum(nil), len(g.states), g.seed))
	}
	t.Logf("%d states from %d seeds, %d bytes rendered", states, len(seeds), size)
	golden := filepath.Join("testdata", "renderings.sha256")
	if *updateRenderings && !raceEnabled {
		if err := os.WriteFile(golden, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	wantLines := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
	for i, line := range lines {
		if raceEnabled && i < len(wantLines) { // the seed's digest and the group's size
			w := strings.Fields(wantLines[i])
			w[1] = strings.Fields(line)[1]
			wantLines[i] = strings.Join(w, " ")
		}
		if i >= len(wantLines) || wantLines[i] != line {
			t.Errorf("rendered differently (compare with -dump-renderings):\n got  %s\n want %s", line, wantLines[min(i, len(wantLines)-1)])
		}
	}
	if len(wantLines) != len(lines) {
		t.Errorf("%s has %d groups, the crawl %d", golden, len(wantLines), len(lines))
	}
}

// withFragment is a state's URL asking for the playground alone.
func withFragment(u string) string { return u + "&" + playview.FragmentParam + "=1" }
