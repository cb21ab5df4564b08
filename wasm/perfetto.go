package wasm

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/tracebook/tracebook/analysis/report"
)

//go:embed perfetto.js
var perfettoJS string

// PerfettoJS is the inline script that saves a finding's Perfetto file
// from the page (a blob: URL handed to an <a download>). Every report
// carries it (jsCode), hashed in the CSP like the loader; it needs no
// module.
var PerfettoJS = jsCode(perfettoJS)

// perfettoTail is what a report page carries for its findings' Perfetto
// files, before the loader: the files (#tb-perfetto-files) when there are
// any, and the script that saves them. The files element is a JSON object:
// "files" maps a file name to its head (gzip + base85, base85.go) and the
// id of its body, "bodies" maps an id to a body (gzip + base85); a file is its head
// then its body (report.PerfettoFile.Split), and findings with the same
// window share one body.
func perfettoTail(files []report.PerfettoFile) (string, error) {
	var b strings.Builder
	if len(files) > 0 {
		// Each body once (files of one window share theirs), each part
		// compressed on a goroutine of its own.
		// A part the files' budget compressed already (PerfettoFile.Gz)
		// is stored as it is.
		var heads, bodies, headsGz, bodiesGz [][]byte
		bodyOf := make([]int, len(files))
		ids := map[string]int{}
		for i, f := range files {
			split := min(max(f.Split, 0), len(f.JSON))
			body := string(f.JSON[split:])
			id, ok := ids[body]
			if !ok {
				id = len(bodies)
				ids[body] = id
				bodies = append(bodies, f.JSON[split:])
				bodiesGz = append(bodiesGz, nil)
			}
			if bodiesGz[id] == nil && f.Split == split {
				bodiesGz[id] = f.Gz[1]
			}
			bodyOf[i] = id
			heads = append(heads, f.JSON[:split])
			if f.Split == split {
				headsGz = append(headsGz, f.Gz[0])
			} else {
				headsGz = append(headsGz, nil)
			}
		}
		parts := append(heads, bodies...)
		partsGz := append(headsGz, bodiesGz...)
		blobs := make([]string, len(parts))
		errs := make([]error, len(parts))
		var wg sync.WaitGroup
		for i, b := range parts {
			wg.Go(func() {
				gz, err := partsGz[i], error(nil)
				if gz == nil {
					gz, err = gzipBytes(b)
				}
				blobs[i], errs[i] = encodeBlob(gz), err
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return "", err
		}
		doc := perfettoDoc{Files: map[string][2]string{}, Bodies: map[string]string{}}
		for i, f := range files {
			doc.Files[f.Name] = [2]string{blobs[i], strconv.Itoa(bodyOf[i])}
		}
		for id := range bodies {
			doc.Bodies[strconv.Itoa(id)] = blobs[len(heads)+id]
		}
		j, err := json.Marshal(doc) // sorted keys; escapes <, > and & in the names (the base85 parts have none)
		if err != nil {
			return "", fmt.Errorf("encoding the Perfetto files: %w", err)
		}
		b.WriteString(`<script type="application/json" id="tb-perfetto-files" data-encoding="` + encodingBase85 + `">`)
		b.Write(j)
		b.WriteString("</script>\n")
	}
	b.WriteString("<script>" + PerfettoJS + "</script>\n")
	return b.String(), nil
}

// perfettoDoc is the JSON of #tb-perfetto-files.
type perfettoDoc struct {
	Files  map[string][2]string `json:"files"`  // name -> [head, body id]
	Bodies map[string]string    `json:"bodies"` // body id -> body
}

// ExtractPerfetto reads back the Perfetto files a report embeds: file name
// -> the Chrome-trace JSON. A report without files gives an empty map.
func ExtractPerfetto(page []byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	text, enc, ok := scriptElement(string(page), "tb-perfetto-files")
	if !ok {
		return out, nil
	}
	var doc perfettoDoc
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("reading the Perfetto files: %w", err)
	}
	unpack := func(name, blob string) ([]byte, error) {
		gz, err := decodeBlob(blob, enc)
		if err != nil {
			return nil, fmt.Errorf("Perfetto file %s: %w", name, err)
		}
		data, err := gunzip(gz)
		if err != nil {
			return nil, fmt.Errorf("Perfetto file %s: %w", name, err)
		}
		return data, nil
	}
	names := make([]string, 0, len(doc.Files))
	for n := range doc.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		e := doc.Files[n]
		body, ok := doc.Bodies[e[1]]
		if !ok {
			return nil, fmt.Errorf("Perfetto file %s: its body %q is missing", n, e[1])
		}
		head, err := unpack(n, e[0])
		if err != nil {
			return nil, err
		}
		rest, err := unpack(n, body)
		if err != nil {
			return nil, err
		}
		out[n] = append(head, rest...)
	}
	return out, nil
}
