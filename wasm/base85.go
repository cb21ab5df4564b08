package wasm

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// The page's blobs (the bundle, the module, the Perfetto files) are gzip
// then base85: 4 bytes -> 5 characters, against base64's 3 -> 4, which
// makes the page about 6% smaller.
//
// The encoding is Ascii85's arithmetic (each 4-byte group read big-endian
// as a number written in base 85, most significant digit first), with no
// 'z' or 'y' shortcut, over the Z85 alphabet with its three characters that
// HTML treats specially replaced: '&' by ';', '<' by '_', '>' by '~'. The
// alphabet therefore holds none of < > & " ' \ ` nor white space: an
// encoded blob can sit in a <script> element (no "</script" nor "<!--" can
// appear) or in a JSON string (nothing to escape) as it is.
//
// A final group of n < 4 bytes (n > 0) is padded with zero bytes, encoded,
// and only its first n+1 characters are written; the decoder pads such a
// group with the last character ('#', 84) and keeps its first n bytes (as
// Ascii85 does). A remainder of 1 character is invalid, as is a group
// worth more than 2^32-1. The decoder skips ASCII white space.
//
// wasm/loader.js and wasm/perfetto.js decode it in the page (base85 there).
const base85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?;_~()[]{}@%$#"

// Encodings, in the data-encoding attribute of a blob's element. Pages
// written before base85 say gzip+base64; Extract and the loader read both.
const (
	encodingBase85 = "gzip+base85"
	encodingBase64 = "gzip+base64"
)

// base85Values maps a character to its value; 0xff: not in the alphabet.
var base85Values = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := 0; i < len(base85Alphabet); i++ {
		t[base85Alphabet[i]] = byte(i)
	}
	return t
}()

// base85EncodedLen is the length of the encoding of n bytes.
func base85EncodedLen(n int) int {
	l := n / 4 * 5
	if r := n % 4; r > 0 {
		l += r + 1
	}
	return l
}

// base85Encode encodes src (see base85Alphabet).
func base85Encode(src []byte) string {
	dst := make([]byte, base85EncodedLen(len(src)))
	d := dst
	for len(src) > 0 {
		var g [4]byte
		n := copy(g[:], src)
		src = src[n:]
		v := uint32(g[0])<<24 | uint32(g[1])<<16 | uint32(g[2])<<8 | uint32(g[3])
		var c [5]byte
		for i := 4; i >= 0; i-- {
			c[i] = base85Alphabet[v%85]
			v /= 85
		}
		d = d[copy(d, c[:n+1]):]
	}
	return string(dst)
}

// base85Decode decodes s, skipping ASCII white space. It fails on a
// character outside the alphabet, a group worth more than 2^32-1, a
// remainder of one character, and a final group that the encoder would not
// have written (so that a decoded blob encodes back to s, white space aside).
func base85Decode(s string) ([]byte, error) {
	dst := make([]byte, 0, len(s)/5*4+3)
	var v uint64
	n := 0 // characters in the group so far
	for i := 0; i < len(s); i++ {
		c := s[i]
		d := base85Values[c]
		if d == 0xff {
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' {
				continue
			}
			return nil, fmt.Errorf("base85: invalid character %q at offset %d", c, i)
		}
		v = v*85 + uint64(d)
		if n++; n == 5 {
			if v > 0xffffffff {
				return nil, fmt.Errorf("base85: the group ending at offset %d is worth more than 2^32-1", i)
			}
			dst = append(dst, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
			v, n = 0, 0
		}
	}
	switch n {
	case 0:
		return dst, nil
	case 1:
		return nil, fmt.Errorf("base85: a final group of one character (%d characters in all)", len(s))
	}
	tail := v
	for i := n; i < 5; i++ {
		v = v*85 + 84
	}
	if v > 0xffffffff {
		return nil, fmt.Errorf("base85: the final group is worth more than 2^32-1")
	}
	var g [4]byte
	g[0], g[1], g[2], g[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	// The encoder pads with zero bytes: the same bytes so padded give the
	// same first n characters, or the tail is not one it writes.
	var p [4]byte
	copy(p[:n-1], g[:n-1])
	w := uint64(p[0])<<24 | uint64(p[1])<<16 | uint64(p[2])<<8 | uint64(p[3])
	for i := n; i < 5; i++ {
		w /= 85
	}
	if w != tail {
		return nil, fmt.Errorf("base85: the final group is not canonical")
	}
	return append(dst, g[:n-1]...), nil
}

// encodeBlob encodes a page's blob (gzip-compressed) for its element.
func encodeBlob(gz []byte) string { return base85Encode(gz) }

// decodeBlob decodes the text of a blob's element written with the given
// data-encoding: gzip+base85, or gzip+base64 (pages written before base85,
// and pages with no attribute). The result is still gzip-compressed.
func decodeBlob(text, encoding string) ([]byte, error) {
	switch encoding {
	case encodingBase85:
		return base85Decode(text)
	case encodingBase64, "":
		return base64.StdEncoding.DecodeString(strings.Join(strings.Fields(text), ""))
	}
	return nil, fmt.Errorf("unknown data-encoding %q", encoding)
}
