package report

import (
	"fmt"
	"io"

	"github.com/vmihailenco/msgpack/v5"
)

// RenderBundle decodes an encoded bundle, builds the report for view v and
// prints it in format f. The viewer module and the native code both call it.
func RenderBundle(w io.Writer, bundle []byte, v View, f Format) error {
	var d Doc
	if err := msgpack.Unmarshal(bundle, &d); err != nil {
		return fmt.Errorf("decoding the bundle: %w", err)
	}
	applyView(&d, v)
	return Print(w, &d, f)
}
