package wasm

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"
)

// The vectors' encodings were computed independently: Python's
// base64.a85encode per 4-byte group ('z' written out as "!!!!!"), each
// Ascii85 character c mapped to base85Alphabet[c-'!']. "HelloWorld" is
// Z85's own example (the alphabets agree on letters and digits).
var base85Vectors = []struct {
	raw, enc string
}{
	{"", ""},
	{"\x00", "00"},
	{"\x00\x00", "000"},
	{"\x00\x00\x00", "0000"},
	{"\x00\x00\x00\x00", "00000"},
	{"\xff", "@@"},
	{"\xff\xff", "%nJ"},
	{"\xff\xff\xff", "%nS9"},
	{"\xff\xff\xff\xff", "%nSc0"},
	{"\x86\x4f\xd2\x6f\xb5\x59\xf7\x5b", "HelloWorld"},
	{"tracebook", "BAg/1wNYN@yx"},
	{"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff", "abZy8000000@;"},
	{"\x01\x02\x03\x04\x05\x06\x07\x08\x09", "0rJua1Qkhq2("},
}

func TestBase85Alphabet(t *testing.T) {
	if len(base85Alphabet) != 85 {
		t.Fatalf("the alphabet has %d characters, want 85", len(base85Alphabet))
	}
	seen := map[rune]bool{}
	for _, c := range base85Alphabet {
		if c <= ' ' || c > '~' {
			t.Errorf("%q is not printable ASCII", c)
		}
		if strings.ContainsRune("<>&\"'\\`", c) {
			t.Errorf("%q must not be in the alphabet (HTML, JSON or a script element would treat it specially)", c)
		}
		if seen[c] {
			t.Errorf("%q twice", c)
		}
		seen[c] = true
	}
}

func TestBase85Vectors(t *testing.T) {
	for _, v := range base85Vectors {
		if got := base85Encode([]byte(v.raw)); got != v.enc {
			t.Errorf("encode(%x) = %q, want %q", v.raw, got, v.enc)
		}
		if n := base85EncodedLen(len(v.raw)); n != len(v.enc) {
			t.Errorf("encodedLen(%d) = %d, want %d", len(v.raw), n, len(v.enc))
		}
		got, err := base85Decode(v.enc)
		if err != nil || string(got) != v.raw {
			t.Errorf("decode(%q) = %x, %v; want %x", v.enc, got, err, v.raw)
		}
	}
}

func TestBase85DecodeSkipsWhiteSpace(t *testing.T) {
	got, err := base85Decode(" Hello\tWor\r\nld\f ")
	if err != nil || string(got) != "\x86\x4f\xd2\x6f\xb5\x59\xf7\x5b" {
		t.Errorf("decode with white space = %x, %v", got, err)
	}
}

func TestBase85DecodeErrors(t *testing.T) {
	for _, tc := range []struct{ in, why string }{
		{"0", "a final group of one character"},
		{"00000a", "a final group of one character"},
		{"%nSc1", "2^32 is out of range"},
		{"#####", "85^5-1 is out of range"},
		{"%nSd", "a final group worth more than 2^32-1 once padded"},
		{"@#", "a final group the encoder does not write (0xff is \"@@\")"},
		{"01", "a final group the encoder does not write (0x00 is \"00\")"},
		{"Hello<orld", "'<' is not in the alphabet"},
		{"Hello,orld", "',' is not in the alphabet"},
		{"Hell\"World", "'\"' is not in the alphabet"},
		{"HelloWorl\u00e9", "a non-ASCII character"},
	} {
		if got, err := base85Decode(tc.in); err == nil {
			t.Errorf("decode(%q) = %x, want an error: %s", tc.in, got, tc.why)
		}
	}
}

func TestDecodeBlob(t *testing.T) {
	raw := []byte("\x1f\x8b\x08\x00 some bytes \xff")
	for _, tc := range []struct{ text, enc string }{
		{base85Encode(raw), "gzip+base85"},
		{"H4sIACBzb21lIGJ5dGVzIP8=", "gzip+base64"},
		{"H4sIACBzb21l\nIGJ5dGVzIP8=", ""}, // no attribute: a page from before the attribute
	} {
		got, err := decodeBlob(tc.text, tc.enc)
		if err != nil || !bytes.Equal(got, raw) {
			t.Errorf("decodeBlob(%q, %q) = %q, %v", tc.text, tc.enc, got, err)
		}
	}
	if _, err := decodeBlob("00", "gzip+base32"); err == nil {
		t.Error("an unknown data-encoding must fail")
	}
}

// TestBlobOf: the module's text built beside it is used where it is the
// module's (its length, its last group: the gzip trailer), and the module
// is encoded again where the text is another build's or missing.
func TestBlobOf(t *testing.T) {
	gz := make([]byte, 1001)
	rand.New(rand.NewSource(1)).Read(gz)
	want := ModuleText(gz)
	other := bytes.Clone(gz)
	other[len(other)-1]++ // another module: its CRC-32 and size differ
	middle := []byte(want)
	middle[len(middle)/2] = '0' // same length and trailer: taken as it is
	for _, tc := range []struct {
		name, text, want string
	}{
		{"built beside it", want, want},
		{"missing", "", want},
		{"another build", ModuleText(other), want},
		{"shorter", want[:len(want)-5], want},
		{"trusted on length and trailer", string(middle), string(middle)},
	} {
		if got := blobOf(gz, tc.text); got != tc.want {
			t.Errorf("%s: blobOf gave %d characters, not the ones wanted", tc.name, len(got))
		}
	}
	if got := blobOf(nil, ""); got != "" {
		t.Errorf("no module: blobOf = %q, want empty", got)
	}
}

func base85Seeds() [][]byte {
	seeds := [][]byte{{}}
	for n := 1; n <= 9; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(0x5a * (i + n))
		}
		seeds = append(seeds, b)
	}
	r := rand.New(rand.NewSource(85))
	for _, n := range []int{13, 64, 1021} {
		b := make([]byte, n)
		r.Read(b)
		seeds = append(seeds, b)
	}
	return append(seeds, bytes.Repeat([]byte{0xff}, 11), make([]byte, 7))
}

// FuzzBase85RoundTrip: every byte string encodes to the alphabet, at the
// length base85EncodedLen says, and decodes back.
func FuzzBase85RoundTrip(f *testing.F) {
	for _, s := range base85Seeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		enc := base85Encode(data)
		if len(enc) != base85EncodedLen(len(data)) {
			t.Fatalf("encoding of %d bytes has %d characters, want %d", len(data), len(enc), base85EncodedLen(len(data)))
		}
		for i := 0; i < len(enc); i++ {
			if base85Values[enc[i]] == 0xff {
				t.Fatalf("encoding has %q, not in the alphabet", enc[i])
			}
		}
		got, err := base85Decode(enc)
		if err != nil {
			t.Fatalf("decode(encode(%x)): %v", data, err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("decode(encode(%x)) = %x", data, got)
		}
	})
}

// FuzzBase85Decode: whatever decodes is canonical, so it encodes back to
// the same text less its white space.
func FuzzBase85Decode(f *testing.F) {
	for _, v := range base85Vectors {
		f.Add(v.enc)
	}
	for _, s := range []string{"0", "01", "@#", "%nSd", "#####", " Hel lo\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := base85Decode(s)
		if err != nil {
			return
		}
		if enc, want := base85Encode(got), strings.Join(strings.Fields(s), ""); enc != want {
			t.Fatalf("decode(%q) = %x, which encodes to %q", s, got, enc)
		}
	})
}

func BenchmarkBase85Decode(b *testing.B) {
	data := make([]byte, 2<<20)
	rand.New(rand.NewSource(1)).Read(data)
	enc := base85Encode(data)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		base85Decode(enc)
	}
}
