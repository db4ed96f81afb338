package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stormbench/stormbench/bench/compare"
	"github.com/stormbench/stormbench/bench/result"
)

// layoutCheck runs in the page after it loads and writes what the test
// asserts into <pre id="layout-check">: the page's width against its
// content's, the elements that stick out to the right, and per chart its
// drawn size and how many of its paths carry a data colour (the palette)
// with a visible extent.
const layoutCheck = `<script>
window.addEventListener('load', () => {
  const W = document.documentElement.clientWidth;
  const over = [];
  document.querySelectorAll('body *').forEach(e => {
    const r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > W + 1) over.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ' right ' + Math.round(r.right));
  });
  // A table cell whose words sit on more lines than it has words was
  // broken inside a word (a squeezed column).
  const broken = [];
  document.querySelectorAll('td, th').forEach(e => {
    const words = e.textContent.trim().split(/\s+/).filter(w => w).length;
    // The lines of the cell's text, not the row's height.
    const range = document.createRange();
    range.selectNodeContents(e);
    const lines = new Set(Array.from(range.getClientRects()).filter(r => r.width > 0).map(r => Math.round(r.top))).size;
    if (words > 0 && lines > words) broken.push(e.textContent.trim().slice(0, 40) + ' (' + lines + ' lines)');
  });
  const palette = PALETTE;
  const charts = [];
  document.querySelectorAll('svg').forEach(s => {
    const fig = s.closest('[id]');
    const r = s.getBoundingClientRect();
    let data = 0;
    s.querySelectorAll('path').forEach(p => {
      const st = (p.getAttribute('style') || '').toUpperCase();
      if (!palette.some(c => st.includes('STROKE:' + c) || st.includes('FILL:' + c))) return;
      const b = p.getBBox();
      if (b.width > 0 || b.height > 0) data++;
    });
    charts.push({id: fig ? fig.id : '', width: r.width, height: r.height, data: data});
  });
  const pre = document.createElement('pre');
  pre.id = 'layout-check';
  pre.textContent = JSON.stringify({width: W, scrollWidth: document.documentElement.scrollWidth, over: over.slice(0, 20), broken: broken.slice(0, 20), charts: charts});
  document.body.appendChild(pre);
});
</script>`

// chromium finds a headless browser: Debian's chromium (`apt-get install
// chromium`, which .ci/run does), or another Chrome on PATH.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI=true: no chromium on PATH (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH: apt-get install chromium to run the browser test")
	return ""
}

// TestHTMLReportInBrowser renders the reports of committed results as
// stormbench writes them, loads each in headless Chromium at a laptop's
// width, and checks the layout the reader sees: nothing wider than the
// page, and every chart drawn with data in it.
func TestHTMLReportInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	browser := chromium(t)
	var palHex []string
	for _, c := range palette {
		palHex = append(palHex, fmt.Sprintf("%q", fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B)))
	}
	script := strings.Replace(layoutCheck, "PALETTE", "["+strings.Join(palHex, ",")+"]", 1)
	for _, file := range []string{"../../results/baselines/quick.json", "../../results/aa/aa.json"} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			r, err := result.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Build(compare.Input{Name: filepath.Base(file), Result: r}, Options{Charts: true})
			if err != nil {
				t.Fatal(err)
			}
			var page bytes.Buffer
			if err := WriteHTML(&page, rep); err != nil {
				t.Fatal(err)
			}
			doc := strings.Replace(page.String(), "</body>", script+"</body>", 1)
			path := filepath.Join(t.TempDir(), "report.html")
			if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
				"--window-size=1280,900", "--virtual-time-budget=10000", "--dump-dom", "file://"+path)
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("chromium: %v", err)
			}
			m := regexp.MustCompile(`(?s)<pre id="layout-check">(.*?)</pre>`).FindSubmatch(out)
			if m == nil {
				t.Fatalf("the page's layout check did not run; chromium printed %d bytes", len(out))
			}
			var got struct {
				Width, ScrollWidth float64
				Over               []string
				Broken             []string
				Charts             []struct {
					ID            string
					Width, Height float64
					Data          int
				}
			}
			if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &got); err != nil {
				t.Fatal(err)
			}
			if got.ScrollWidth > got.Width || len(got.Over) > 0 {
				t.Errorf("the page is %v px wide in a %v px window; sticking out: %q", got.ScrollWidth, got.Width, got.Over)
			}
			if len(got.Broken) > 0 {
				t.Errorf("table cells broken inside a word: %q", got.Broken)
			}
			if len(got.Charts) == 0 {
				t.Fatal("no charts")
			}
			for _, c := range got.Charts {
				if c.Width < 100 || c.Height < 100 || c.Data == 0 {
					t.Errorf("chart %s: %vx%v px with %d data paths; want a visible plot with data", c.ID, c.Width, c.Height, c.Data)
				}
			}
			t.Logf("%d charts, page %v px in %v", len(got.Charts), got.ScrollWidth, got.Width)
		})
	}
}
