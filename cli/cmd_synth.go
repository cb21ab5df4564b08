package cli

import (
	"bufio"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tracebook/tracebook/analysis/trace/synth"
)

func runSynth(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("synth", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 2, "number of copies")
	out := fs.String("o", "", "output file; .gz compresses it")
	// The trace may come before the flags: parse twice around it.
	if err := fs.Parse(args); err != nil {
		return err
	}
	if rest := fs.Args(); len(rest) > 0 && len(rest[0]) > 0 && rest[0][0] != '-' {
		if err := fs.Parse(rest[1:]); err != nil {
			return err
		}
		args = append([]string{rest[0]}, fs.Args()...)
	} else {
		args = rest
	}
	if len(args) != 1 || *out == "" {
		return errors.New("usage: tracebook synth TRACE -n N -o OUT.json[.gz]")
	}
	src, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer src.Close()
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var dst io.Writer = w
	var zw *gzip.Writer
	if strings.HasSuffix(*out, ".gz") {
		zw, _ = gzip.NewWriterLevel(w, gzip.BestSpeed)
		dst = zw
	}
	if err := synth.Scale(src, dst, *n); err != nil {
		f.Close()
		os.Remove(*out)
		return fmt.Errorf("%s: %w", args[0], err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %s (%d copies of %s)\n", *out, *n, args[0])
	return nil
}
