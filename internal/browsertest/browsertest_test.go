package browsertest_test

import (
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"idemlab/internal/browsertest"
)

const fixturePage = `<!doctype html>
<html><head><title>fixture</title></head>
<body><h1 data-testid="greeting">Hello, browser</h1>
<script>console.error("expected fixture error")</script>
</body></html>`

func TestNew_DrivesAPage(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, fixturePage)
	}))
	defer server.Close()

	ctx := browsertest.New(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(server.URL)); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(browsertest.TestID("greeting")))
	if err != nil {
		t.Fatal(err)
	}
	if text != "Hello, browser" {
		t.Errorf("greeting = %q, want %q", text, "Hello, browser")
	}

	path := browsertest.Screenshot(t, ctx, "fixture")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if w := img.Bounds().Dx(); w != browsertest.ViewportWidth {
		t.Errorf("screenshot width = %d, want %d", w, browsertest.ViewportWidth)
	}

	errs := browsertest.PageErrors(ctx)
	if len(errs) != 1 || !strings.Contains(errs[0], "expected fixture error") {
		t.Errorf("PageErrors = %q, want the fixture's console.error", errs)
	}
}

func TestFindChromium_HonoursEnv(t *testing.T) {
	t.Setenv(browsertest.EnvChromium, "/nonexistent/chromium-for-test")
	_, err := browsertest.FindChromium()
	if err == nil || !strings.Contains(err.Error(), browsertest.EnvChromium) {
		t.Errorf("FindChromium() error = %v, want one naming %s", err, browsertest.EnvChromium)
	}
}
