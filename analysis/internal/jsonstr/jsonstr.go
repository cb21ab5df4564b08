// Package jsonstr decodes the body of a JSON string (RFC 8259 §7): the
// two-character escapes and \uXXXX, with UTF-16 surrogate pairs joined and a
// lone half replaced by U+FFFD, as encoding/json does. The trace importer
// (analysis/trace) and the viewer's small JSON reader (analysis/report) both
// decode strings with Append. It imports nothing but unicode/utf8 and
// unicode/utf16, so the viewer's WebAssembly module stays small.
package jsonstr

import (
	"unicode/utf16"
	"unicode/utf8"
)

// Mode says what Append does with the bytes that are not escapes.
type Mode uint8

const (
	// Raw copies them as they are, control characters and invalid UTF-8
	// included; the caller cleans them up if it needs to.
	Raw Mode = iota
	// Strict rejects a raw control character (below 0x20) and replaces each
	// byte of invalid UTF-8 with U+FFFD, as encoding/json does.
	Strict
)

// Status says why Append stopped.
type Status uint8

const (
	// OK: the closing quote was reached.
	OK Status = iota
	// Short: the input ended first; more input may complete the string.
	Short
	// BadEscape: a backslash is followed by a byte that starts no escape.
	BadEscape
	// BadHex: \u is not followed by four hex digits.
	BadHex
	// Control: a raw control character, in Strict mode.
	Control
)

// Append appends the unescaped form of the JSON string whose body starts at
// s[0] (the byte after the opening quote) to dst and returns the extended
// dst, an offset in s and a status. With OK the offset is the byte after
// the closing quote. Otherwise it points at the first error:
//
//   - Short: len(s) when no closing quote follows; the backslash of an
//     escape that s cuts after its backslash; the first hex digit of a \u
//     escape that s cuts inside its digits.
//   - BadEscape: the byte after the backslash.
//   - BadHex: the first of the four hex digits.
//   - Control: the control character.
//
// A \u escape of a surrogate half followed by a \u escape of the other half
// decodes to one rune; any other surrogate half decodes to U+FFFD and the
// escape after it is decoded on its own. Short is reported only where more
// input could change the result: after a surrogate half at the very end of
// s, or followed only by a backslash, since a pair may follow.
func Append(dst, s []byte, mode Mode) ([]byte, int, Status) {
	j := 0
	for {
		// Copy the run of plain bytes up to the next quote or backslash.
		if mode == Raw {
			for j < len(s) {
				c := s[j]
				if c == '"' || c == '\\' {
					break
				}
				dst = append(dst, c)
				j++
			}
		} else {
			for j < len(s) {
				c := s[j]
				if c == '"' || c == '\\' {
					break
				}
				if c < 0x20 {
					return dst, j, Control
				}
				if c < utf8.RuneSelf {
					dst = append(dst, c)
					j++
					continue
				}
				r, size := utf8.DecodeRune(s[j:])
				dst = utf8.AppendRune(dst, r)
				j += size
			}
		}
		if j >= len(s) {
			return dst, len(s), Short
		}
		if s[j] == '"' {
			return dst, j + 1, OK
		}
		// s[j] is a backslash.
		if j+1 >= len(s) {
			return dst, j, Short
		}
		switch e := s[j+1]; e {
		case '"', '\\', '/':
			dst = append(dst, e)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			if j+6 > len(s) {
				return dst, j + 2, Short
			}
			r, ok := Hex4(s[j+2:])
			if !ok {
				return dst, j + 2, BadHex
			}
			j += 6
			if utf16.IsSurrogate(r) {
				if j >= len(s) || (j+1 == len(s) && s[j] == '\\') {
					return dst, j, Short
				}
				if s[j] == '\\' && s[j+1] == 'u' {
					if j+6 > len(s) {
						return dst, j + 2, Short
					}
					r2, ok := Hex4(s[j+2:])
					if !ok {
						return dst, j + 2, BadHex
					}
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						dst = utf8.AppendRune(dst, d)
						j += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			return dst, j + 1, BadEscape
		}
		j += 2
	}
}

// Hex4 decodes the four hex digits at the start of s, which must hold at
// least four bytes.
func Hex4(s []byte) (rune, bool) {
	var r rune
	for _, c := range s[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
