package jsonstr

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppend(t *testing.T) {
	// in is the string's body, the opening quote left out. want is the
	// decoded string with OK, and n the offset Append returns, in in.
	tests := []struct {
		name string
		in   string
		mode Mode
		want string
		n    int
		st   Status
	}{
		{"empty", `"`, Raw, "", 1, OK},
		{"plain", `abc"`, Raw, "abc", 4, OK},
		{"plain, bytes after the quote", `abc"xyz"`, Strict, "abc", 4, OK},
		{"plain utf-8", `héllo 日本 😀"`, Strict, "héllo 日本 😀", len(`héllo 日本 😀"`), OK},
		{"quote", `a\"b"`, Raw, `a"b`, 5, OK},
		{"backslash", `a\\b"`, Raw, `a\b`, 5, OK},
		{"slash", `a\/b"`, Raw, "a/b", 5, OK},
		{"backspace", `\b"`, Raw, "\b", 3, OK},
		{"form feed", `\f"`, Raw, "\f", 3, OK},
		{"newline", `\n"`, Raw, "\n", 3, OK},
		{"carriage return", `\r"`, Raw, "\r", 3, OK},
		{"tab", `\t"`, Raw, "\t", 3, OK},
		{"every simple escape, strict", `\"\\\/\b\f\n\r\t"`, Strict, "\"\\/\b\f\n\r\t", 17, OK},
		{"escaped backslash before the quote", `a\\"b"`, Raw, `a\`, 4, OK},
		{"\\u ascii", `\u0041"`, Raw, "A", 7, OK},
		{"\\u two bytes", `\u00e9"`, Raw, "é", 7, OK},
		{"\\u three bytes, upper case", `x\u65E5y"`, Strict, "x日y", 9, OK},
		{"\\u nul", `\u0000"`, Strict, "\x00", 7, OK},
		{"surrogate pair", `\ud83d\ude00"`, Raw, "😀", 13, OK},
		{"surrogate pair, upper case", `a\uD83D\uDE00b"`, Strict, "a😀b", 15, OK},
		{"lone high half", `a\ud800b"`, Raw, "a\uFFFDb", 9, OK},
		{"lone high half before the quote", `a\ud800"`, Strict, "a\uFFFD", 8, OK},
		{"lone low half", `a\udc00b"`, Raw, "a\uFFFDb", 9, OK},
		{"high half, then a \\u that is no low half", `\ud800\u0041"`, Strict, "\uFFFDA", 13, OK},
		{"high half, then another escape", `\ud800\n"`, Raw, "\uFFFD\n", 9, OK},
		{"two high halves, then a low half", `\ud800\ud800\udc00"`, Raw, "\uFFFD\U00010000", 19, OK},
		{"low half, then high half", `\udc00\ud800"`, Strict, "\uFFFD\uFFFD", 13, OK},
		{"raw control character kept", "a\x01b\"", Raw, "a\x01b", 4, OK},
		{"invalid utf-8 kept", "a\xff\xfeb\\n\"", Raw, "a\xff\xfeb\n", 7, OK},
		{"invalid utf-8 replaced byte by byte", "a\xff\xfeb\\n\"", Strict, "a\uFFFD\uFFFDb\n", 7, OK},
		{"cut utf-8 replaced", "\xe6\x97\"", Strict, "\uFFFD\uFFFD", 3, OK},

		{"no closing quote", `abc`, Raw, "", 3, Short},
		{"no closing quote after an escape", `a\n`, Strict, "", 3, Short},
		{"escaped quote is no closing quote", `a\"`, Raw, "", 3, Short},
		{"cut after the backslash", `ab\`, Raw, "", 2, Short},
		{"truncated \\u", `a\u00`, Raw, "", 3, Short},
		{"truncated \\u, no digit", `a\u`, Strict, "", 3, Short},
		{"high half at the end", `\ud800`, Raw, "", 6, Short},
		{"high half, then a cut backslash", `\ud800\`, Strict, "", 6, Short},
		{"high half, then a truncated \\u", `\ud800\udc`, Raw, "", 8, Short},
		{"invalid escape", `a\qb"`, Raw, "", 2, BadEscape},
		{"invalid escape, strict", `a\x"`, Strict, "", 2, BadEscape},
		{"escaped single quote", `\'"`, Raw, "", 1, BadEscape},
		{"invalid escape before the end", `\q`, Raw, "", 1, BadEscape},
		{"invalid hex digit", `a\u00g0"`, Raw, "", 3, BadHex},
		{"invalid hex digit, last", `\u000G"`, Strict, "", 2, BadHex},
		{"invalid hex before a cut pair", `\ud800\uzz`, Raw, "", 8, Short},
		{"invalid hex in a pair", `\ud800\udzzz"`, Raw, "", 8, BadHex},
		{"sign is no hex digit", `\u+123"`, Strict, "", 2, BadHex},
		{"raw control character, strict", "a\x01b\"", Strict, "", 1, Control},
		{"raw newline, strict", "a\n\"", Strict, "", 1, Control},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, n, st := Append([]byte("prefix:"), []byte(tc.in), tc.mode)
			if st != tc.st || n != tc.n {
				t.Fatalf("Append(%q, %d) = %q, %d, %v; want %d, %v", tc.in, tc.mode, got, n, st, tc.n, tc.st)
			}
			if !strings.HasPrefix(string(got), "prefix:") {
				t.Fatalf("Append(%q, %d) = %q, lost what dst held", tc.in, tc.mode, got)
			}
			if st == OK && string(got) != "prefix:"+tc.want {
				t.Errorf("Append(%q, %d) = %q, want %q", tc.in, tc.mode, got[len("prefix:"):], tc.want)
			}
		})
	}
}

// TestAppendMatchesEncodingJSON: in Strict mode, what encoding/json accepts
// decodes the same, and what it rejects is an error.
func TestAppendMatchesEncodingJSON(t *testing.T) {
	for _, body := range []string{
		`plain`, `\"\\\/\b\f\n\r\t`, `\u00e9\u65e5`, `\ud83d\ude00`, `\ud800`, `\udc00x`, `\ud800\u0041`,
		`\udc00\ud800`, `\ud800\ud800\udc00`, "\xff\xfe", "\xe6\x97", `\q`, `\u12g4`, "a\x1fb", `\ud800\n`,
	} {
		var want string
		jerr := json.Unmarshal([]byte(`"`+body+`"`), &want)
		got, _, st := Append(nil, []byte(body+`"`), Strict)
		if (jerr == nil) != (st == OK) || (st == OK && string(got) != want) {
			t.Errorf("Append(%q) = %q, %v; encoding/json: %q, %v", body, got, st, want, jerr)
		}
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range []string{`a\"b"`, `\ud83d\ude00"`, `\ud800\u0041"`, "\xff\x01\"", `\u12`, `\`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		raw, n, st := Append(nil, s, Raw)
		if n < 0 || n > len(s) || (st == OK && (n == 0 || s[n-1] != '"')) {
			t.Fatalf("Append(%q, Raw) = %q, %d, %v: offset out of place", s, raw, n, st)
		}
		strict, n2, st2 := Append(nil, s, Strict)
		if st2 == OK && !utf8.Valid(strict) {
			t.Fatalf("Append(%q, Strict) = %q: invalid UTF-8", s, strict)
		}
		// Strict stops where Raw does, unless it meets a control character
		// first, and decodes valid UTF-8 as Raw does.
		if st2 != Control && (st2 != st || n2 != n || (st == OK && utf8.Valid(raw) && string(strict) != string(raw))) {
			t.Fatalf("Append(%q): Raw %q, %d, %v; Strict %q, %d, %v", s, raw, n, st, strict, n2, st2)
		}
		// A prefix of s is Short, or fails at the same place, or is s's
		// own result when it holds the closing quote.
		for k := range len(s) {
			_, pn, pst := Append(nil, s[:k], Raw)
			switch {
			case pst == Short:
			case st == OK && pst == OK && pn == n && k >= n:
			case pst == st && pn == n:
			default:
				t.Fatalf("Append(%q) = %d, %v, but its prefix %q = %d, %v", s, n, st, s[:k], pn, pst)
			}
		}
	})
}

// BenchmarkAppend measures a 60-byte name with escapes, the importer's case.
func BenchmarkAppend(b *testing.B) {
	s := []byte(`aten::\"add_\" \u00e9\ud83d\ude00\tfunctions\\python\/module.py(42)"`)
	dst := make([]byte, 0, 128)
	for _, m := range []struct {
		name string
		mode Mode
	}{{"raw", Raw}, {"strict", Strict}} {
		b.Run(m.name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				var st Status
				dst, _, st = Append(dst[:0], s, m.mode)
				if st != OK {
					b.Fatal(st)
				}
			}
		})
	}
}
