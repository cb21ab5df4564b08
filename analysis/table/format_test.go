package table

import (
	"html"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMs(t *testing.T) {
	tests := []struct {
		ns   float64
		want string
	}{
		{0, "0.000 ms"},
		{42_000, "0.042 ms"},
		{499, "0.000 ms"},
		{500, "0.001 ms"},
		{12_345_000, "12.345 ms"},
		{1_234_567_890, "1,234.568 ms"},
		{-2_500_000, "-2.500 ms"},
		{-1, "0.000 ms"}, // rounds to zero: no "-0.000"
		{math.NaN(), "NaN ms"},
	}
	for _, tc := range tests {
		if got := Ms(tc.ns); got != tc.want {
			t.Errorf("Ms(%v) = %q, want %q", tc.ns, got, tc.want)
		}
	}
	if got := Ms(int64(21_834_000)); got != "21.834 ms" {
		t.Errorf("Ms(int64 21834000) = %q, want 21.834 ms", got)
	}
}

// The findings' prose rounds a duration to its magnitude, without grouping.
func TestProseMs(t *testing.T) {
	tests := []struct {
		ns   int64
		want string
	}{
		{0, "0.000 ms"},
		{42_000, "0.042 ms"},
		{999_999, "1.000 ms"},
		{1_000_000, "1.0 ms"},
		{12_345_000, "12.3 ms"},
		{99_949_999, "99.9 ms"},
		{100_000_000, "100 ms"},
		{1_234_567_890, "1235 ms"},
		{-2_500_000, "-2.500 ms"},
	}
	for _, tc := range tests {
		if got := ProseMs(tc.ns); got != tc.want {
			t.Errorf("ProseMs(%d) = %q, want %q", tc.ns, got, tc.want)
		}
	}
}

func TestProseUs(t *testing.T) {
	tests := []struct {
		ns   int64
		want string
	}{
		{0, "0.0 µs"},
		{12_450, "12.4 µs"},
		{12_550, "12.6 µs"},
		{999_999, "1000.0 µs"},
		{1_000_000, "1.0 ms"},
		{250_000_000, "250 ms"},
	}
	for _, tc := range tests {
		if got := ProseUs(tc.ns); got != tc.want {
			t.Errorf("ProseUs(%d) = %q, want %q", tc.ns, got, tc.want)
		}
	}
}

// A --window bound is written as the option takes it.
func TestWindowMs(t *testing.T) {
	tests := []struct {
		ns   int64
		want string
	}{
		{0, ""},
		{1, "0.000001ms"},
		{1_500_000, "1.5ms"},
		{20_000_000, "20ms"},
		{1_234_567_891, "1234.567891ms"},
	}
	for _, tc := range tests {
		if got := WindowMs(tc.ns); got != tc.want {
			t.Errorf("WindowMs(%d) = %q, want %q", tc.ns, got, tc.want)
		}
	}
}

func TestWindow(t *testing.T) {
	tests := []struct {
		start, end int64
		want       string
	}{
		{1_000_000, 2_500_000, "window 1.000 ms .. 2.500 ms"},
		{0, 20_000_000, "window 0.000 ms .. 20.000 ms"},
		{5_000_000, 0, "window 5.000 ms .. end"},
		{1_234_567_891, 2_000_000_000, "window 1,234.568 ms .. 2,000.000 ms"},
	}
	for _, tc := range tests {
		if got := Window(tc.start, tc.end); got != tc.want {
			t.Errorf("Window(%d, %d) = %q, want %q", tc.start, tc.end, got, tc.want)
		}
	}
}

func TestNumbers(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"Int 0", Int(0), "0"},
		{"Int 999", Int(999), "999"},
		{"Int 1000", Int(1000), "1,000"},
		{"Int negative", Int(-1234567), "-1,234,567"},
		{"Int min", Int(math.MinInt64), "-9,223,372,036,854,775,808"},
		{"Pct", Pct(0.1234), "12.3%"},
		{"Pct 1", Pct(1), "100.0%"},
		{"Decimal", Decimal(1234.5, 2), "1,234.50"},
		{"Decimal no decimals", Decimal(1234567.6, 0), "1,234,568"},
		{"Decimal -0", Decimal(-0.0001, 2), "0.00"},
		{"Decimal Inf", Decimal(math.Inf(-1), 2), "-Inf"},
		{"Float third", Float(1.0 / 3), "0.333"},
		{"Float whole", Float(1200), "1200"},
		{"Float tiny", Float(1e-9), "1e-09"},
		{"Float zero", Float(0), "0"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s = %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

func TestCell(t *testing.T) {
	tests := []struct {
		v       any
		unit    string
		want    string
		numeric bool
	}{
		{int64(4_820_123), "DURATION_NS", "4.820", true},
		{float64(4_820_123), "duration_ns", "4.820", true},
		{int64(695_000), "TIMESTAMP_NS", "0.695", true},
		{int64(2554), "COUNT", "2,554", true},
		{int64(34079899648), "BYTES", "34,079,899,648", true},
		{74.666, "PCT", "74.7", true},
		{0.5, "share", "50.0", true},
		{12.3456, "GBPS", "12.35", true},
		{35.25, "ms", "35.250", true},
		{int64(1000), "INT", "1000", true}, // ranks, steps, ids: not grouped
		{int64(1000), "", "1000", true},
		{1.0 / 3, "", "0.333", true},
		{int32(7), "COUNT", "7", true},
		{nil, "COUNT", "", false},
		{true, "BOOL", "true", false},
		{"aten::to", "TEXT", "aten::to", false},
	}
	for _, tc := range tests {
		got, num := Cell(tc.v, tc.unit)
		if got != tc.want || num != tc.numeric {
			t.Errorf("Cell(%#v, %q) = %q, %v; want %q, %v", tc.v, tc.unit, got, num, tc.want, tc.numeric)
		}
	}
}

func TestHeader(t *testing.T) {
	tests := []struct {
		c    Column
		want string
	}{
		{Column{Name: "blocked_ns", Unit: "DURATION_NS"}, "blocked (ms)"},
		{Column{Name: "max_blocked_ns", Unit: "DURATION_NS"}, "max blocked (ms)"},
		{Column{Name: "first_ns", Unit: "TIMESTAMP_NS"}, "first (ms)"},
		{Column{Name: "ns", Unit: "DURATION_NS"}, "ns (ms)"},
		{Column{Name: "share_pct", Unit: "PCT"}, "share (%)"},
		{Column{Name: "gpu_total_mem", Unit: "BYTES"}, "gpu total mem (bytes)"},
		{Column{Name: "bytes", Unit: "BYTES"}, "bytes"},
		{Column{Name: "gbps", Unit: "GBPS"}, "bandwidth (GB/s)"},
		{Column{Name: "total_ms", Unit: "ms"}, "total (ms)"},
		{Column{Name: "count", Unit: "COUNT"}, "count"},
		{Column{Name: "rank_source", Type: "VARCHAR", Unit: "TEXT"}, "rank source"},
		{Column{Name: "dur_ns", Type: "BIGINT"}, "dur_ns"}, // a query's own column: as written
	}
	for _, tc := range tests {
		if got := Header(tc.c); got != tc.want {
			t.Errorf("Header(%+v) = %q, want %q", tc.c, got, tc.want)
		}
	}
}

func TestShortenMiddle(t *testing.T) {
	long := "void at::native::vectorized_elementwise_kernel<4, at::native::sqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}>(int)"
	tests := []struct {
		name  string
		in    string
		limit int
		want  string
	}{
		{"short stays", "aten::to", 80, "aten::to"},
		{"exactly the limit", "abcdefghij", 10, "abcdefghij"},
		{"ascii", "abcdefghijkl", 10, "abcdefg…kl"},
		{"kernel", long, 40, "void at::native::vectorized_el…#2}>(int)"},
		{"multibyte is never split", "日本語のカーネル名前がとても長い", 8, "日本語のカー…い"},
		{"emoji", "⚠️🔥🔥🔥🔥🔥🔥🔥🔥", 5, "⚠️🔥…🔥"},
		{"invalid utf-8 stays bytes", "ab\xffcdefgh\xfe", 6, "ab\xffc…\xfe"},
		{"limit below 2", "abc", 0, "a…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ShortenMiddle(tc.in, tc.limit)
			if got != tc.want {
				t.Errorf("ShortenMiddle(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
			}
			if utf8.ValidString(tc.in) && !utf8.ValidString(got) {
				t.Errorf("ShortenMiddle(%q, %d) = %q: split a UTF-8 sequence", tc.in, tc.limit, got)
			}
			if n := utf8.RuneCountInString(got); n > max(tc.limit, 2) {
				t.Errorf("ShortenMiddle(%q, %d) has %d code points", tc.in, tc.limit, n)
			}
		})
	}
	// Every limit over every cut point of a mixed string stays valid.
	s := strings.Repeat("aé日🔥", 10)
	for limit := 2; limit < 45; limit++ {
		if got := ShortenMiddle(s, limit); !utf8.ValidString(got) || utf8.RuneCountInString(got) != min(limit, 40) {
			t.Errorf("ShortenMiddle(mixed, %d) = %q", limit, got)
		}
	}
}

func TestFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"}, {1, "1"}, {0.5, "0.5"}, {1.0 / 3, "0.333"}, {-2.25, "-2.25"}, {123456789, "123456789"},
		{0.0001, "0.0001"}, {0.00001, "1e-05"}, {-0.0001, "-0.0001"}, {1e20, "1e+20"}, {math.NaN(), "NaN"}, {math.Inf(-1), "-Inf"}, {-0.0004, "-0.0004"},
	}
	for _, tc := range tests {
		if got := Float(tc.in); got != tc.want {
			t.Errorf("Float(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestShortenDistinct(t *testing.T) {
	a := "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, at::detail::Array<char*, 3> >(int)"
	b := "void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float>, at::detail::Array<char*, 3> >(int)"
	c := "short_kernel"
	got := ShortenDistinct([]string{a, b, c, a}, 40)
	if got[0] == got[1] {
		t.Errorf("two kernels read alike: %q", got[0])
	}
	if got[0] != got[3] {
		t.Errorf("one name shortened two ways: %q and %q", got[0], got[3])
	}
	if got[2] != c {
		t.Errorf("a short name changed: %q", got[2])
	}
	for i, s := range got[:2] {
		if n := utf8.RuneCountInString(s); n >= utf8.RuneCountInString(a) && s != []string{a, b}[i] {
			t.Errorf("%q is no shorter than the name and not the name", s)
		}
	}
	// Names that differ from the first: each kept as short as ShortenMiddle.
	if got := ShortenDistinct([]string{a, c}, 40); got[0] != ShortenMiddle(a, 40) {
		t.Errorf("a name with no look-alike = %q, want %q", got[0], ShortenMiddle(a, 40))
	}
}

// EscapeHTML is html.EscapeString without package html.
func TestEscapeHTML(t *testing.T) {
	for _, s := range []string{"", "plain", `<script>alert("x")</script>`, "a & b's <c> \"d\"", "&amp; already", "ünïcode ≥ <", "\x00<\xff>"} {
		if got, want := EscapeHTML(s), html.EscapeString(s); got != want {
			t.Errorf("EscapeHTML(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestRuns(t *testing.T) {
	tests := []struct {
		in   []int
		max  int
		want string
	}{
		{nil, 0, ""},
		{[]int{0}, 0, "0"},
		{[]int{3, 1, 2, 0, 2}, 0, "0–3"},
		{[]int{0, 1, 5}, 0, "0–1, 5"},
		{[]int{0, 2, 5, 6, 7, 8, 9}, 0, "0, 2, 5–9"},
		{[]int{-1, 0, 1}, 0, "-1–1"},
		{[]int{0, 2, 4, 6, 8, 10}, 4, "0, 2, 4, 6, … (2 more)"},
		{[]int{0, 2, 4, 6}, 4, "0, 2, 4, 6"},
	}
	for _, tc := range tests {
		if got := Runs(tc.in, tc.max); got != tc.want {
			t.Errorf("Runs(%v, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

// Look-alike names keep their difference in sight within the limit: the
// three Hopper GEMMs of the vLLM H100 trace differ only in their tile and
// warp-group sizes, which a middle cut at 40 code points hides.
func TestShortenDistinctWithinLimit(t *testing.T) {
	gemm := func(tile, wg string) string {
		return "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize" + tile + "_warpgroupsize" + wg + "_execute_segment_k_off_kernel__5x_cublas"
	}
	fill := func(ty string) string {
		return "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<" + ty + ">, std::array<char*, 1ul> >(int, at::native::FillFunctor<" + ty + ">, std::array<char*, 1ul>)"
	}
	tests := []struct {
		names []string
		limit int
		shows []string // what each label must contain
	}{
		{[]string{gemm("64x128x64", "1x1x1"), gemm("128x128x64", "1x1x1"), gemm("128x256x64", "2x1x1")}, 40,
			[]string{"64x128x64", "128x128x64", "128x256x64"}},
		{[]string{gemm("64x128x64", "1x1x1"), gemm("128x128x64", "1x1x1"), gemm("128x256x64", "2x1x1")}, 20,
			[]string{"4x1", "8x1", "8x2"}},
		{[]string{fill("int"), fill("long"), fill("int")}, 96, []string{"<int>", "<long>", "<int>"}},
		{[]string{fill("int"), fill("long")}, 40, []string{"int>", "long"}},
		// The names part near the start or near the end.
		{[]string{"aXb" + strings.Repeat("m", 60), "aYb" + strings.Repeat("m", 60)}, 20, []string{"aXb", "aYb"}},
		{[]string{strings.Repeat("m", 60) + "aXb", strings.Repeat("m", 60) + "aYb"}, 20, []string{"aXb", "aYb"}},
		// One name the head of another.
		{[]string{strings.Repeat("m", 60), strings.Repeat("m", 60) + "_tail"}, 20, []string{"m", "tail"}},
	}
	for _, tc := range tests {
		got := ShortenDistinct(tc.names, tc.limit)
		seen := map[string]string{}
		for i, l := range got {
			if n := utf8.RuneCountInString(l); n > tc.limit {
				t.Errorf("%q: %d code points, limit %d", l, n, tc.limit)
			}
			if !strings.Contains(l, tc.shows[i]) {
				t.Errorf("label %q of %q does not show %q", l, tc.names[i], tc.shows[i])
			}
			if m, ok := seen[l]; ok && m != tc.names[i] {
				t.Errorf("%q and %q both read %q", m, tc.names[i], l)
			}
			seen[l] = tc.names[i]
		}
	}
}

func TestSignedPct(t *testing.T) {
	for in, want := range map[float64]string{0.123: "+12.3%", -0.004: "-0.4%", 0: "0.0%"} {
		if got := SignedPct(in); got != want {
			t.Errorf("SignedPct(%v) = %q, want %q", in, got, want)
		}
	}
}
