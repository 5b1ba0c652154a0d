package workshopweb

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/a-h/templ"
	qrcode "github.com/yeqown/go-qrcode/v2"
)

// qrQuietZone is the blank border, in modules, that scanners need.
const qrQuietZone = 4

// qrSVG draws text as a QR code in SVG: the library computes the matrix,
// svgQRWriter draws it as one path of unit squares, black on white in both
// themes (scanners expect dark modules on light), scaling to any projector.
func qrSVG(text string) (templ.Component, error) {
	qr, err := qrcode.New(text)
	if err != nil {
		return nil, fmt.Errorf("web: QR code of %q: %w", text, err)
	}
	var w svgQRWriter
	if err := qr.Save(&w); err != nil {
		return nil, err
	}
	svg := w.svg
	return templ.ComponentFunc(func(_ context.Context, out io.Writer) error {
		_, err := io.WriteString(out, svg)
		return err
	}), nil
}

// svgQRWriter is a qrcode.Writer that keeps the SVG of the matrix.
type svgQRWriter struct{ svg string }

func (w *svgQRWriter) Write(mat qrcode.Matrix) error {
	bits := mat.Bitmap()
	size := len(bits) + 2*qrQuietZone
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" shape-rendering="crispEdges" role="img" aria-label="QR code of the join link">`, size, size)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="`, size, size)
	for y, row := range bits {
		for x, dark := range row {
			if dark {
				fmt.Fprintf(&b, "M%d %dh1v1h-1z", x+qrQuietZone, y+qrQuietZone)
			}
		}
	}
	b.WriteString(`"/></svg>`)
	w.svg = b.String()
	return nil
}

func (w *svgQRWriter) Close() error { return nil }
