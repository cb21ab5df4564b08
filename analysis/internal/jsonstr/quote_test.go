package jsonstr

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendQuoted(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "aten::mm", `"aten::mm"`},
		{"quote and backslash", `a"b\c`, `"a\"b\\c"`},
		{"short escapes", "a\nb\rc\td", `"a\nb\rc\td"`},
		{"controls and DEL", "\x00\x1f\x7f", `"\u0000\u001f\u007f"`},
		{"markup", "</script><b>&", `"\u003c/script\u003e\u003cb\u003e\u0026"`},
		{"line separators", "a\u2028b\u2029", `"a\u2028b\u2029"`},
		{"invalid utf-8", "a\xffb", `"a\ufffdb"`},
		{"multibyte", "日本 été 🔥", `"日本 été 🔥"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := string(AppendQuoted([]byte("x"), tc.in))
			if got != "x"+tc.want {
				t.Errorf("AppendQuoted(%q) = %s, want x%s", tc.in, got, tc.want)
			}
			// encoding/json reads it back as the same string (invalid
			// UTF-8 as U+FFFD), and so does Append.
			var back string
			if err := json.Unmarshal([]byte(tc.want), &back); err != nil {
				t.Fatalf("json.Unmarshal(%s): %v", tc.want, err)
			}
			if want := strings.ToValidUTF8(tc.in, "\uFFFD"); back != want {
				t.Errorf("json.Unmarshal(%s) = %q, want %q", tc.want, back, want)
			}
			dec, n, st := Append(nil, []byte(tc.want[1:]), Strict)
			if st != OK || n != len(tc.want)-1 || string(dec) != back {
				t.Errorf("Append(%s) = %q, %d, %v", tc.want, dec, n, st)
			}
		})
	}
}

func FuzzAppendQuoted(f *testing.F) {
	for _, s := range []string{"", "a\"b", "</script>", "\xff\xfe", "\u2028", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := AppendQuoted(nil, s)
		if !utf8.Valid(q) {
			t.Fatalf("AppendQuoted(%q) is not valid UTF-8: %q", s, q)
		}
		var back string
		if err := json.Unmarshal(q, &back); err != nil {
			t.Fatalf("AppendQuoted(%q) = %s: %v", s, q, err)
		}
		if want := strings.ToValidUTF8(s, "\uFFFD"); utf8.ValidString(s) && back != want {
			t.Fatalf("round trip of %q gave %q", s, back)
		}
		for _, c := range []string{"<", ">", "&"} {
			if strings.Contains(string(q), c) {
				t.Fatalf("AppendQuoted(%q) = %s holds %s", s, q, c)
			}
		}
	})
}
