package wasm

import (
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/tracebook/tracebook/analysis/report"
)

// PerfettoJS is the inline script that saves a finding's Perfetto file
// from the page (a blob: URL handed to an <a download>). Every report
// carries it, hashed in the CSP like the loader; it needs no module.
//
//go:embed perfetto.js
var PerfettoJS string

// perfettoTail is what a report page carries for its findings' Perfetto
// files, before the loader: the files (#tb-perfetto-files, a JSON object of file
// name -> gzip + base64 of the file) when there are any, and the script
// that saves them.
func perfettoTail(files []report.PerfettoFile) (string, error) {
	var b strings.Builder
	if len(files) > 0 {
		m := map[string]string{}
		for _, f := range files {
			gz, err := gzipBytes(f.JSON)
			if err != nil {
				return "", err
			}
			m[f.Name] = base64.StdEncoding.EncodeToString(gz)
		}
		j, err := json.Marshal(m) // sorted keys; escapes <, > and &
		if err != nil {
			return "", fmt.Errorf("encoding the Perfetto files: %w", err)
		}
		b.WriteString(`<script type="application/json" id="tb-perfetto-files" data-encoding="gzip+base64">`)
		b.Write(j)
		b.WriteString("</script>\n")
	}
	b.WriteString("<script>" + PerfettoJS + "</script>\n")
	return b.String(), nil
}

// ExtractPerfetto reads back the Perfetto files a report embeds: file name
// -> the Chrome-trace JSON. A report without files gives an empty map.
func ExtractPerfetto(page []byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	text, ok := scriptText(string(page), "tb-perfetto-files")
	if !ok {
		return out, nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		return nil, fmt.Errorf("reading the Perfetto files: %w", err)
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		gz, err := base64.StdEncoding.DecodeString(m[n])
		if err != nil {
			return nil, fmt.Errorf("Perfetto file %s: %w", n, err)
		}
		if out[n], err = gunzip(gz); err != nil {
			return nil, fmt.Errorf("Perfetto file %s: %w", n, err)
		}
	}
	return out, nil
}
