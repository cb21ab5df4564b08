package jsonstr

import "unicode/utf8"

// AppendQuoted appends s to dst as a JSON string, quotes included: the
// quote and the backslash escaped, \n, \r and \t as two-character escapes,
// the other control characters, DEL and <, > and & as \u00XX (so the text
// can never close an HTML element it is embedded in), U+2028 and U+2029
// escaped (JavaScript reads them as line ends), and each byte of invalid
// UTF-8 as \ufffd. It is the one JSON string encoder: the trace writers
// (analysis/trace, its synth package) and the Perfetto window files use it,
// and Append decodes what it writes back to s (invalid UTF-8 aside).
func AppendQuoted(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028':
			dst = append(dst, `\u2028`...)
		case r == '\u2029':
			dst = append(dst, `\u2029`...)
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
